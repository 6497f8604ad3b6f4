//! `kdp mock-broker`: run every broker of a cluster file in this process.
//!
//! Prints the bootstrap list as one line on stdout once every listener is
//! bound, and one line per broker on stderr; serves until SIGINT or SIGTERM.
//! With `--tls-cert`/`--tls-key` every listener speaks TLS; with users in
//! the cluster file every connection must authenticate with SASL.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::BrokerAddress;
use kdp_server::{Cluster, MockCluster, MockConfig};

const SECURITY_HELP: &str = "\
Secured listeners:
  TLS: --tls-cert and --tls-key (PEM) make every broker speak TLS; add
  --tls-client-ca to require client certificates (mutual TLS). The
  certificate must name the host clients connect to (e.g. 127.0.0.1).
  SASL: users in the cluster file make every broker require SASL (PLAIN,
  SCRAM-SHA-256, SCRAM-SHA-512) before any request but ApiVersions; the
  file's ACLs can then differ per principal (User:<name>):

    \"sasl\": {\"users\": [
      {\"name\": \"alice\", \"password\": \"alice-secret\"},
      {\"name\": \"bob\", \"password\": \"bob-secret\", \"mechanisms\": [\"SCRAM-SHA-512\"]}
    ]},
    \"acls\": {\"principals\": {\"User:bob\": {\"topic_read_deny\": [\"payments\"]}}}

  TLS and users together give SASL_SSL, users alone SASL_PLAINTEXT.

Example:
  kdp mock-broker --cluster cluster.json --listen 127.0.0.1:9093 \\
      --tls-cert broker.pem --tls-key broker-key.pem
  kdp describe --bootstrap-server 127.0.0.1:9093 --command-config client.properties

  client.properties:
    security.protocol=SASL_SSL
    sasl.mechanism=SCRAM-SHA-512
    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"alice-secret\";
    ssl.truststore.type=PEM
    ssl.truststore.location=ca.pem

See docs/CLUSTER_FILE.md for the sasl and acls sections.";

#[derive(clap::Args)]
#[command(after_long_help = SECURITY_HELP)]
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

    /// Serve TLS with this certificate chain (PEM, leaf first); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (unencrypted PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Require client certificates that chain to these CAs (PEM): mutual TLS.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
}

/// The rustls configuration the TLS flags ask for, if any; errors name the flag and file.
fn tls_config(args: &Args) -> Result<Option<Arc<rustls::ServerConfig>>, String> {
    let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) else {
        return Ok(None);
    };
    let read = |flag: &str, path: &PathBuf| {
        std::fs::read(path).map_err(|e| format!("{flag} {}: {e}", path.display()))
    };
    let cert_pem = read("--tls-cert", cert)?;
    let key_pem = zeroize::Zeroizing::new(read("--tls-key", key)?);
    let ca_pem = match &args.tls_client_ca {
        Some(p) => Some(read("--tls-client-ca", p)?),
        None => None,
    };
    kdp_server::tls::server_config(kdp_server::tls::TlsPem {
        cert_chain: &cert_pem,
        key: &key_pem,
        client_ca: ca_pem.as_deref(),
    })
    .map(Some)
    .map_err(|e| {
        let (flag, path) = match e.what {
            "key" => ("--tls-key", key),
            "client CA" => (
                "--tls-client-ca",
                args.tls_client_ca.as_ref().unwrap_or(cert),
            ),
            _ => ("--tls-cert", cert),
        };
        format!("{flag} {}: {}", path.display(), e.message)
    })
}

/// What a client's `security.protocol` must be for these listeners, and the SASL mechanisms offered.
fn security_summary(tls: bool, cluster: &Cluster) -> String {
    let mechanisms: Vec<&str> = cluster
        .users
        .enabled_mechanisms()
        .iter()
        .map(|m| m.name())
        .collect();
    match (tls, mechanisms.is_empty()) {
        (false, true) => "PLAINTEXT".into(),
        (true, true) => "SSL".into(),
        (false, false) => format!("SASL_PLAINTEXT: {}", mechanisms.join(", ")),
        (true, false) => format!("SASL_SSL: {}", mechanisms.join(", ")),
    }
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
    let tls = match tls_config(&args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kdp mock-broker: {e}");
            return crate::exit::USAGE;
        }
    };
    let security = security_summary(tls.is_some(), &cluster);
    let max_connections =
        crate::fd_limit::fit_connection_cap(args.max_connections, cluster.brokers.len());
    let config = MockConfig {
        host: listen.host,
        port: listen.port,
        max_request_size: args.max_request_size,
        max_response_size: args.max_response_size,
        idle_timeout: args.idle_timeout,
        max_connections,
        tls,
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
            eprintln!("broker {} listening on {} ({security})", l.id, l.advertised);
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
