//! A request the mock must refuse by closing the connection, never with an
//! answer: shared by the tests that bound what a request can make it build.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Duration};

/// Writes `frame` on `s` and waits until the server closes the connection;
/// panics if it answers instead (with the size it announced).
pub async fn expect_closed_without_answer(mut s: TcpStream, frame: &[u8]) {
    s.write_all(frame).await.unwrap();
    let mut size = [0u8; 4];
    let read = timeout(Duration::from_secs(60), s.read(&mut size))
        .await
        .expect("the server decides within 60 s");
    match read {
        Ok(0) | Err(_) => {}
        Ok(_) => panic!(
            "got an answer announcing {} bytes",
            i32::from_be_bytes(size)
        ),
    }
}
