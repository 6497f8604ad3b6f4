//! What SASL needs from the client, on kdp-test-support's in-memory cluster and
//! tokio's paused clock: a session's end retires its connection (KIP-368,
//! by reconnecting), and an authentication failure ends bootstrap at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kdp_client::{Client, ClientConfig, Connection, ConnectionSetup, Error, SetupFuture};
use kdp_test_support::StallCluster;
use kdp_wire::ErrorCode;

/// Counts setups; each session lasts `life` (as SaslSetup does with the
/// broker's SessionLifetimeMs), or fails as a wrong password does.
struct Session {
    runs: AtomicUsize,
    life: Duration,
    fail: bool,
}

impl ConnectionSetup for Session {
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            if self.fail {
                return Err(Error::Authentication {
                    addr: conn.addr().to_string(),
                    mechanism: "SCRAM-SHA-512",
                    error_code: ErrorCode::SASL_AUTHENTICATION_FAILED,
                    message: "invalid credentials".into(),
                });
            }
            conn.retire_at(tokio::time::Instant::now() + self.life);
            Ok(())
        })
    }
}

fn cluster() -> StallCluster {
    StallCluster::placed(1, &[("t", 0, 1)])
}

fn config(cluster: &StallCluster, session: Arc<Session>) -> ClientConfig {
    let mut c = ClientConfig {
        connector: Arc::new(cluster.clone()),
        bootstrap_timeout: Duration::from_secs(600),
        ..Default::default()
    };
    c.connection.setup = session;
    c
}

#[tokio::test(start_paused = true)]
async fn a_session_past_its_lifetime_is_replaced_by_a_fresh_connection() {
    let cluster = cluster();
    let session = Arc::new(Session {
        runs: AtomicUsize::new(0),
        life: Duration::from_secs(60),
        fail: false,
    });
    let client = Client::connect(cluster.bootstrap(), config(&cluster, session.clone()))
        .await
        .unwrap();
    client.metadata(None).await.unwrap();
    let first = client.broker(1).await.unwrap();
    assert!(
        Arc::ptr_eq(&first, &client.broker(1).await.unwrap()),
        "reused while the session lasts"
    );
    let runs = session.runs.load(Ordering::SeqCst);

    tokio::time::advance(Duration::from_secs(61)).await;
    assert!(!first.is_usable(), "retired at the session's end");
    let second = client.broker(1).await.unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    assert!(second.is_usable());
    assert_eq!(
        session.runs.load(Ordering::SeqCst),
        runs + 1,
        "authenticated anew"
    );
    // and requests work on it
    client.metadata(None).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_authentication_failure_ends_bootstrap_without_retrying() {
    let cluster = cluster();
    let session = Arc::new(Session {
        runs: AtomicUsize::new(0),
        life: Duration::ZERO,
        fail: true,
    });
    let err = Client::connect(cluster.bootstrap(), config(&cluster, session.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        session.runs.load(Ordering::SeqCst),
        1,
        "tried once, not until the timeout"
    );
    let text = err.to_string();
    assert!(
        text.contains("SASL SCRAM-SHA-512 authentication failed: invalid credentials"),
        "{text}"
    );
    assert!(!text.contains("did not finish"), "{text}");
}
