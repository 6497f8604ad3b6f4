//! Memory stays bounded by what clients send, not by what they announce:
//! a counting global allocator watches the whole process (server included).

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn announced_sizes_do_not_allocate() {
    let cluster = Cluster::from_json(include_str!("data/cluster.json")).unwrap();
    let mock = MockCluster::start(
        cluster,
        MockConfig {
            port: 0,
            idle_timeout: Duration::from_secs(30),
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let base = counting_alloc::reset_peak();

    let mut conns = Vec::new();
    for i in 0..100 {
        let mut s = TcpStream::connect(mock.listeners()[i % 4].local_addr)
            .await
            .unwrap();
        // Just under the 100 MiB maximum, so the server accepts the size...
        s.write_all(&(100 * 1024 * 1024i32 - 1).to_be_bytes())
            .await
            .unwrap();
        // ...and then only 1000 bytes arrive.
        s.write_all(&[7u8; 1000]).await.unwrap();
        conns.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    // The server still answers, with all of those pending.
    let mut s = TcpStream::connect(mock.listeners()[0].local_addr)
        .await
        .unwrap();
    let req = [
        0, 0, 0, 10, // size
        0, 18, 0, 0, // ApiVersions v0
        0, 0, 0, 1, // correlation id
        0, 0, // client id ""
    ];
    s.write_all(&req).await.unwrap();
    let mut size = [0u8; 4];
    s.read_exact(&mut size).await.unwrap();
    assert!(i32::from_be_bytes(size) > 0);

    let grown = counting_alloc::peak().saturating_sub(base);
    // 100 connections x 100 MiB announced would be ~10 GiB; the chunked
    // reads keep it to what arrived plus a read chunk per connection.
    assert!(
        grown < 32 * 1024 * 1024,
        "peak allocation grew by {} MiB",
        grown / (1024 * 1024)
    );
    drop(conns);
    mock.shutdown().await;
}
