//! `kdp mock-broker`: run every broker of a cluster file in this process.
//!
//! Prints the bootstrap list as one line on stdout once every listener is
//! bound, and one line per broker on stderr; serves until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::time::Duration;

use kdp_client::BrokerAddress;
use kdp_server::{Cluster, MockCluster, MockConfig};

#[derive(clap::Args)]
pub struct Args {
    /// The cluster file (JSON; see docs/CLUSTER_FILE.md).
    #[arg(long, value_name = "FILE")]
    pub cluster: PathBuf,

    /// Where the first broker listens; the others take the next ports.
    /// Port 0 gives every broker a free port.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9092")]
    pub listen: String,

    /// Largest request accepted, in bytes (Kafka's socket.request.max.bytes).
    #[arg(long, value_name = "BYTES", default_value_t = kdp_wire::frame::DEFAULT_MAX_FRAME_SIZE)]
    pub max_request_size: usize,

    /// Largest response sent, in bytes; a request whose answer would be
    /// larger is logged and its connection closed (kdp's client accepts
    /// 100 MiB by default).
    #[arg(long, value_name = "BYTES", default_value_t = kdp_server::mock::DEFAULT_MAX_RESPONSE_SIZE)]
    pub max_response_size: usize,

    /// Close connections idle for this long (e.g. 30s, 10m).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = crate::duration::parse)]
    pub idle_timeout: Duration,

    /// Refuse connections beyond this many (all brokers together).
    #[arg(long, value_name = "N", default_value_t = kdp_server::mock::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
}

pub fn run(args: Args) -> i32 {
    let cluster = match Cluster::from_path(&args.cluster) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kdp mock-broker: {e}");
            return crate::exit::PARTIAL;
        }
    };
    let listen = match BrokerAddress::parse_listen(&args.listen) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kdp mock-broker: --listen: {e}");
            return crate::exit::USAGE;
        }
    };
    let max_connections =
        crate::fd_limit::fit_connection_cap(args.max_connections, cluster.brokers.len());
    let config = MockConfig {
        host: listen.host,
        port: listen.port,
        max_request_size: args.max_request_size,
        max_response_size: args.max_response_size,
        idle_timeout: args.idle_timeout,
        max_connections,
        ..MockConfig::default()
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kdp mock-broker: cannot start the runtime: {e}");
            return crate::exit::UNREACHABLE;
        }
    };
    rt.block_on(async move {
        // Before the bootstrap line is out: a signal sent as soon as it is
        // read must find its handler (the default action kills the process).
        let mut signals = crate::signal::Signals::install();
        let mock = match MockCluster::start(cluster, config).await {
            Ok(m) => m,
            Err(e) => {
                eprintln!("kdp mock-broker: {e}");
                return crate::exit::UNREACHABLE;
            }
        };
        for l in mock.listeners() {
            eprintln!("broker {} listening on {}", l.id, l.advertised);
        }
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", mock.bootstrap());
            let _ = out.flush();
        }
        let signal = signals.recv().await;
        eprintln!("kdp mock-broker: {signal}: shutting down");
        mock.shutdown().await;
        crate::exit::OK
    })
}
