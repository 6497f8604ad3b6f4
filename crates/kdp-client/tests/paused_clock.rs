//! Timeouts, retries and connection setup against the in-memory fake cluster
//! on tokio's paused clock: what happened is asserted, never how long it took.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr_of, answer_from, partition_answer, Answer, MemCluster};
use kdp_client::{
    Client, ClientConfig, Connection, ConnectionConfig, ConnectionSetup, DescribeEvent,
    DescribeOptions, Error, PartitionOutcome, SetupFuture, TopicSelection,
};
use kdp_wire::error_code;
use kdp_wire::messages::{DescribeProducersRequest, MetadataRequest, TopicRequest};

fn client_config(cluster: &MemCluster) -> ClientConfig {
    ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    }
}

async fn describe_all(cluster: &MemCluster, opts: DescribeOptions) -> Vec<PartitionOutcome> {
    let client = Client::connect(cluster.bootstrap(), client_config(cluster))
        .await
        .unwrap();
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let sink = outcomes.clone();
    // spawned: the describe future can run on any worker
    tokio::spawn(async move {
        kdp_client::describe_producers(Arc::new(client), &opts, |ev| {
            if let DescribeEvent::Results { outcomes: o, .. } = ev {
                sink.lock().unwrap().extend(o)
            }
        })
        .await
        .unwrap();
    })
    .await
    .unwrap();
    let mut outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    outcomes.sort_by_key(|o| o.partition);
    outcomes
}

fn topic_t() -> DescribeOptions {
    DescribeOptions {
        topics: Some(vec![TopicSelection {
            name: "t".into(),
            partitions: None,
        }]),
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn bootstrap_finds_a_broker_that_starts_listening_late() {
    let cluster = MemCluster::new(
        1,
        &[("t", 0, 1)],
        Arc::new(|b, r| Answer::Respond(answer_from(b, r))),
    );
    cluster.state().listening.clear();
    let later = cluster.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        later.state().listening.insert(1);
    });
    let config = ClientConfig {
        bootstrap_timeout: Duration::from_secs(5),
        ..client_config(&cluster)
    };
    let client = Client::connect(cluster.bootstrap(), config).await.unwrap();
    let md = client.metadata(None).await.unwrap();
    assert_eq!(md.leader("t", 0), Some(1));
}

#[tokio::test(start_paused = true)]
async fn bootstrap_gives_up_at_its_timeout_with_the_reasons() {
    let cluster = MemCluster::new(1, &[], Arc::new(|b, r| Answer::Respond(answer_from(b, r))));
    cluster.state().listening.clear();
    let config = ClientConfig {
        bootstrap_timeout: Duration::from_secs(5),
        ..client_config(&cluster)
    };
    let start = tokio::time::Instant::now();
    let err = Client::connect(cluster.bootstrap(), config)
        .await
        .unwrap_err();
    let Error::Bootstrap { attempts } = &err else {
        panic!("{err}")
    };
    // the refusal itself is reported, by kind rather than by the OS's text
    assert!(
        attempts
            .iter()
            .any(|e| matches!(e, Error::Connect { source, .. }
            if source.kind() == std::io::ErrorKind::ConnectionRefused)),
        "{err}"
    );
    // kept trying until the timeout, not a fixed number of passes
    assert!(
        start.elapsed() >= Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
}

/// Leader 2 never answers; metadata moves leadership to broker 1 after the
/// first lookup. The request to 2 times out below the overall deadline and
/// the partition is re-routed, instead of waiting out the whole timeout.
#[tokio::test(start_paused = true)]
async fn a_frozen_leader_is_rerouted_after_a_request_timeout_below_the_deadline() {
    let cluster = MemCluster::new(
        2,
        &[("t", 0, 2)],
        Arc::new(|b, r| {
            if b == 2 {
                Answer::Never
            } else {
                Answer::Respond(answer_from(b, r))
            }
        }),
    );
    cluster.state().on_metadata = Some(Box::new(|leaders, n| {
        if n >= 2 {
            leaders.insert(("t".into(), 0), 1);
        }
    }));
    let opts = DescribeOptions {
        timeout: Duration::from_secs(30),
        request_timeout: Duration::from_secs(30),
        ..topic_t()
    };
    let out = describe_all(&cluster, opts).await;
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].broker_id, Some(1));
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 100);
    let asked: Vec<i32> = cluster.state().dp_calls.iter().map(|(b, _)| *b).collect();
    assert_eq!(asked, vec![2, 1]);
}

/// The leader freezes entirely, and it is also the connection metadata was
/// read from: the metadata refresh waits only a request's bound on it, then
/// asks another broker, which knows the new leader.
#[tokio::test(start_paused = true)]
async fn a_frozen_leader_that_also_served_metadata_is_routed_around() {
    let cluster = MemCluster::new(
        2,
        &[("t", 0, 1)],
        Arc::new(|b, r| Answer::Respond(answer_from(b, r))),
    );
    cluster.state().freeze_on_dp.insert(1);
    cluster.state().on_metadata = Some(Box::new(|leaders, n| {
        if n >= 2 {
            leaders.insert(("t".into(), 0), 2);
        }
    }));
    let opts = DescribeOptions {
        timeout: Duration::from_secs(30),
        request_timeout: Duration::from_secs(30),
        ..topic_t()
    };
    let out = describe_all(&cluster, opts).await;
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].broker_id, Some(2), "{out:?}");
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 200);
}

/// Broker 1 answers for partition 1 too, which was routed to broker 2 and
/// which broker 2 answers later: broker 2's answer is the one reported.
#[tokio::test(start_paused = true)]
async fn an_answer_for_a_partition_the_broker_was_not_asked_is_ignored() {
    let cluster = MemCluster::new(
        2,
        &[("t", 0, 1), ("t", 1, 2)],
        Arc::new(|b, r| {
            let mut resp = answer_from(b, r);
            if b == 1 {
                let mut bogus = partition_answer(1, 1);
                bogus.error_code = error_code::TOPIC_AUTHORIZATION_FAILED;
                bogus.active_producers.clear();
                resp.topics[0].partitions.push(bogus);
                Answer::Respond(resp)
            } else {
                Answer::After(Duration::from_millis(100), resp)
            }
        }),
    );
    let out = describe_all(&cluster, topic_t()).await;
    assert_eq!(out.len(), 2, "each partition reported once: {out:?}");
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 100);
    assert_eq!(out[1].broker_id, Some(2));
    assert_eq!(out[1].result.as_ref().unwrap()[0].producer_id, 201);
}

#[tokio::test(start_paused = true)]
async fn timed_out_requests_leave_no_slot_on_the_connection() {
    let cluster = MemCluster::new(1, &[], Arc::new(|_, _| Answer::Never));
    let conn = Connection::connect(
        &addr_of(1),
        &cluster,
        ConnectionConfig::default(),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    let req = DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "t".into(),
            partition_indexes: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    };
    for _ in 0..20 {
        let err = conn
            .send_with_timeout(&req, 0, Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::RequestTimeout { .. }), "{err}");
    }
    // and one given up by dropping its future
    let dropped = tokio::time::timeout(Duration::from_millis(10), conn.send(&req, 0)).await;
    assert!(dropped.is_err());
    assert_eq!(conn.pending_requests(), 0);
    assert!(conn.is_usable());
}

/// Sends a Metadata request from inside the setup (as SASL will send its
/// own requests) and records what the broker had seen by then.
struct Probe {
    cluster: MemCluster,
    fail: bool,
    seen: Mutex<Option<(bool, usize, usize)>>,
}

impl ConnectionSetup for Probe {
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(async move {
            let negotiated = conn.api_versions().is_some();
            conn.request(&MetadataRequest::default()).await?;
            let st = self.cluster.state();
            *self.seen.lock().unwrap() = Some((negotiated, st.metadata_calls, st.dp_calls.len()));
            if self.fail {
                return Err(Error::Broker {
                    addr: conn.addr().to_string(),
                    api: "SaslAuthenticate",
                    error_code: error_code::SASL_AUTHENTICATION_FAILED,
                    message: None,
                });
            }
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn connection_setup_runs_after_api_versions_and_before_the_first_request() {
    let cluster = MemCluster::new(
        1,
        &[("t", 0, 1)],
        Arc::new(|b, r| Answer::Respond(answer_from(b, r))),
    );
    let probe = Arc::new(Probe {
        cluster: cluster.clone(),
        fail: false,
        seen: Mutex::new(None),
    });
    let mut config = client_config(&cluster);
    config.connection.setup = probe.clone();
    let client = Client::connect(cluster.bootstrap(), config).await.unwrap();
    // ran on the bootstrap connection, after ApiVersions, before anything else
    assert_eq!(*probe.seen.lock().unwrap(), Some((true, 1, 0)));
    client.metadata(None).await.unwrap();
    assert_eq!(cluster.state().metadata_calls, 2);
}

#[tokio::test(start_paused = true)]
async fn a_failing_connection_setup_fails_the_connection() {
    let cluster = MemCluster::new(1, &[], Arc::new(|b, r| Answer::Respond(answer_from(b, r))));
    let probe = Arc::new(Probe {
        cluster: cluster.clone(),
        fail: true,
        seen: Mutex::new(None),
    });
    let config = ConnectionConfig {
        setup: probe.clone(),
        ..Default::default()
    };
    let err = Connection::connect(&addr_of(1), &cluster, config, Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(
        err.kafka_code(),
        error_code::SASL_AUTHENTICATION_FAILED,
        "{err}"
    );
    assert!(probe.seen.lock().unwrap().is_some());
}

#[tokio::test(start_paused = true)]
async fn describe_honours_throttle_time_and_splits_large_requests() {
    let leaders: Vec<(&str, i32, i32)> = (0..25).map(|p| ("t", p, 1)).collect();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls2 = calls.clone();
    let cluster = MemCluster::new(
        1,
        &leaders,
        Arc::new(move |b, r| {
            let mut resp = answer_from(b, r);
            if calls2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                resp.throttle_time_ms = 300;
            }
            Answer::Respond(resp)
        }),
    );
    let opts = DescribeOptions {
        max_partitions_per_request: 10,
        ..topic_t()
    };
    let start = tokio::time::Instant::now();
    let out = describe_all(&cluster, opts).await;
    assert_eq!(out.len(), 25);
    assert!(out.iter().all(|o| o.result.is_ok()));
    assert_eq!(
        cluster.state().dp_calls.len(),
        3,
        "25 partitions in chunks of 10"
    );
    // on the paused clock only the throttle moves time forward
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "waited out the throttle"
    );
}
