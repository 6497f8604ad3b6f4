//! Timeouts, retries and connection setup against kdp-test-support's
//! in-memory cluster (kdp-server's request handling, faults per API and
//! broker) on tokio's paused clock: what happened is asserted, never how
//! long it took.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kdp_client::{
    Client, ClientConfig, Connection, ConnectionConfig, ConnectionSetup, DescribeEvent,
    DescribeOptions, Error, SetupFuture, TimeBound, TopicSelection,
};
use kdp_domain::PartitionOutcome;
use kdp_test_support::{elect, Fault, StallCluster};
use kdp_wire::messages::{
    ApiVersionsRequest, DescribeProducersRequest, MetadataRequest, PartitionResponse, TopicRequest,
};
use kdp_wire::{api, ErrorCode};

fn addr_of(id: i32) -> kdp_client::BrokerAddress {
    StallCluster::address(id)
}

fn client_config(cluster: &StallCluster) -> ClientConfig {
    ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    }
}

async fn describe_all(cluster: &StallCluster, opts: DescribeOptions) -> Vec<PartitionOutcome> {
    let client = Client::connect(cluster.bootstrap(), client_config(cluster))
        .await
        .unwrap();
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let sink = outcomes.clone();
    // spawned: the describe future can run on any worker
    tokio::spawn(async move {
        // the default bound: 30 s from the call on, a 30 s request timeout
        let bound = TimeBound::after(Duration::from_secs(30));
        kdp_client::describe_producers(Arc::new(client), &opts, &bound, |ev| {
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
    let cluster = StallCluster::placed(1, &[("t", 0, 1)]);
    cluster.refuse(1);
    let later = cluster.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        later.listen(1);
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
    let cluster = StallCluster::placed(1, &[]);
    cluster.refuse(1);
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
    let cluster = StallCluster::placed(2, &[("t", 0, 2)]);
    cluster.stall_on(2, api::DESCRIBE_PRODUCERS);
    // the first lookup names broker 2; from the second on, broker 1
    cluster.after_answer(api::METADATA, |c, _| {
        elect(c, "t", 0, 1);
    });
    let out = describe_all(&cluster, topic_t()).await;
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].broker_id, Some(1));
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 100);
    let asked = cluster.asked_by(api::DESCRIBE_PRODUCERS);
    assert_eq!(asked, vec![2, 1]);
}

/// The leader freezes entirely, and it is also the connection metadata was
/// read from: the metadata refresh waits only a request's bound on it, then
/// asks another broker, which knows the new leader.
#[tokio::test(start_paused = true)]
async fn a_frozen_leader_that_also_served_metadata_is_routed_around() {
    let cluster = StallCluster::placed(2, &[("t", 0, 1)]);
    cluster.fault_on(1, api::DESCRIBE_PRODUCERS, Fault::Freeze);
    // the first lookup names broker 1; from the second on, broker 2
    cluster.after_answer(api::METADATA, |c, _| {
        elect(c, "t", 0, 2);
    });
    let out = describe_all(&cluster, topic_t()).await;
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].broker_id, Some(2), "{out:?}");
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 200);
}

/// Broker 1 answers for partition 1 too, which was routed to broker 2 and
/// which broker 2 answers later: broker 2's answer is the one reported.
#[tokio::test(start_paused = true)]
async fn an_answer_for_a_partition_the_broker_was_not_asked_is_ignored() {
    let cluster = StallCluster::placed(2, &[("t", 0, 1), ("t", 1, 2)]);
    cluster.edit::<DescribeProducersRequest, _>(|b, _, resp| {
        if b == 1 {
            resp.topics[0].partitions.push(PartitionResponse {
                partition_index: 1,
                error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                ..Default::default()
            });
        }
    });
    cluster.fault_on(
        2,
        api::DESCRIBE_PRODUCERS,
        Fault::Delay(Duration::from_millis(100)),
    );
    let out = describe_all(&cluster, topic_t()).await;
    assert_eq!(out.len(), 2, "each partition reported once: {out:?}");
    assert_eq!(out[0].result.as_ref().unwrap()[0].producer_id, 100);
    assert_eq!(out[1].broker_id, Some(2));
    assert_eq!(out[1].result.as_ref().unwrap()[0].producer_id, 201);
}

#[tokio::test(start_paused = true)]
async fn timed_out_requests_leave_no_slot_on_the_connection() {
    let cluster = StallCluster::placed(1, &[]);
    cluster.stall(api::DESCRIBE_PRODUCERS);
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
    cluster: StallCluster,
    fail: bool,
    seen: Mutex<Option<(bool, usize, usize)>>,
}

impl ConnectionSetup for Probe {
    fn setup<'a>(&'a self, conn: &'a Connection) -> SetupFuture<'a> {
        Box::pin(async move {
            let negotiated = conn.api_versions().is_some();
            conn.request(&MetadataRequest::default()).await?;
            let c = &self.cluster;
            let seen = (
                negotiated,
                c.asked(api::METADATA),
                c.asked(api::DESCRIBE_PRODUCERS),
            );
            *self.seen.lock().unwrap() = Some(seen);
            if self.fail {
                return Err(Error::Broker {
                    addr: conn.addr().to_string(),
                    api: "SaslAuthenticate",
                    error_code: ErrorCode::SASL_AUTHENTICATION_FAILED,
                    message: None,
                });
            }
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn connection_setup_runs_after_api_versions_and_before_the_first_request() {
    let cluster = StallCluster::placed(1, &[("t", 0, 1)]);
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
    assert_eq!(cluster.asked(api::METADATA), 2);
}

#[tokio::test(start_paused = true)]
async fn a_failing_connection_setup_fails_the_connection() {
    let cluster = StallCluster::placed(1, &[]);
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
        ErrorCode::SASL_AUTHENTICATION_FAILED,
        "{err}"
    );
    assert!(probe.seen.lock().unwrap().is_some());
}

#[tokio::test(start_paused = true)]
async fn describe_honours_throttle_time_and_splits_large_requests() {
    let leaders: Vec<(&str, i32, i32)> = (0..25).map(|p| ("t", p, 1)).collect();
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls2 = calls.clone();
    let cluster = StallCluster::placed(1, &leaders);
    cluster.edit::<DescribeProducersRequest, _>(move |_, _, resp| {
        if calls2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            resp.throttle_time_ms = 300;
        }
    });
    let opts = DescribeOptions {
        max_partitions_per_request: 10,
        ..topic_t()
    };
    let start = tokio::time::Instant::now();
    let out = describe_all(&cluster, opts).await;
    assert_eq!(out.len(), 25);
    assert!(out.iter().all(|o| o.result.is_ok()));
    assert_eq!(
        cluster.asked(api::DESCRIBE_PRODUCERS),
        3,
        "25 partitions in chunks of 10"
    );
    // on the paused clock only the throttle moves time forward
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "waited out the throttle"
    );
}

// One deadline per command: against kdp-server's demo cluster, answered by
// its own request handling, each API stalled in turn. Whatever stalls, the
// operation ends by its deadline (plus nothing: the clock is paused) and
// names what did not answer.

mod one_deadline {
    use std::sync::Arc;
    use std::time::Duration;

    use kdp_client::admin::DriverOptions;
    use kdp_client::txn::describe::describe_transactions;
    use kdp_client::txn::init_producer_id::force_terminate;
    use kdp_client::txn::list;
    use kdp_client::txn::write_txn_markers::abort;
    use kdp_client::{Client, ClientConfig, DescribeOptions, TimeBound};
    use kdp_domain::repair::AbortSpec;
    use kdp_test_support::StallCluster;
    use kdp_wire::api;
    use kdp_wire::ErrorCode;
    use tokio::time::Instant;

    const BUDGET: Duration = Duration::from_secs(10);

    async fn connected(cluster: &StallCluster) -> Arc<Client> {
        let config = ClientConfig {
            connector: Arc::new(cluster.clone()),
            ..Default::default()
        };
        Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn bootstrap_with_api_versions_stalled_ends_by_the_deadline_naming_the_server() {
        let cluster = StallCluster::demo();
        cluster.stall(api::API_VERSIONS);
        let config = ClientConfig {
            connector: Arc::new(cluster.clone()),
            ..Default::default()
        };
        let start = Instant::now();
        let bound = TimeBound::after(BUDGET);
        let e = Client::connect_within(cluster.bootstrap(), config, &bound)
            .await
            .unwrap_err();
        assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
        let text = e.to_string();
        assert!(text.contains("b1:9092"), "{text}");
        assert!(text.contains("ApiVersions"), "{text}");
    }

    #[tokio::test(start_paused = true)]
    async fn describe_ends_by_its_deadline_when_describe_producers_stalls() {
        let cluster = StallCluster::demo();
        let client = connected(&cluster).await;
        cluster.stall(api::DESCRIBE_PRODUCERS);
        let start = Instant::now();
        let opts = DescribeOptions::default();
        let mut errors = Vec::new();
        let summary = kdp_client::describe_producers(client, &opts, &bound(), |ev| {
            if let kdp_client::DescribeEvent::Results { outcomes, .. } = ev {
                errors.extend(outcomes.into_iter().filter_map(|o| o.result.err()));
            }
        })
        .await
        .unwrap();
        assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
        assert!(summary.partitions > 0);
        assert_eq!(summary.failed, summary.partitions);
        assert!(errors
            .iter()
            .all(|e| e.code == ErrorCode::REQUEST_TIMED_OUT));
        let named = errors
            .iter()
            .filter_map(|e| e.message.as_deref())
            .any(|m| m.contains("DescribeProducers"));
        assert!(named, "{errors:?}");
    }

    fn driver_options() -> DriverOptions {
        DriverOptions::default()
    }

    /// The one bound of each of these operations.
    fn bound() -> TimeBound {
        TimeBound::after(BUDGET)
    }

    /// Each key's error after the driver ran out of time names the API.
    fn assert_named<V: std::fmt::Debug>(
        what: &str,
        results: impl IntoIterator<Item = Result<V, kdp_domain::KeyError>>,
    ) {
        let mut n = 0;
        for r in results {
            let e = r.expect_err(what);
            assert_eq!(e.code, ErrorCode::REQUEST_TIMED_OUT, "{what}: {e:?}");
            let m = e.message.unwrap_or_default();
            assert!(m.contains(what), "{what}: {m}");
            n += 1;
        }
        assert!(n > 0, "{what}: no result");
    }

    #[tokio::test(start_paused = true)]
    async fn transactions_list_ends_by_its_deadline() {
        let cluster = StallCluster::demo();
        let client = connected(&cluster).await;
        cluster.stall(api::LIST_TRANSACTIONS);
        let start = Instant::now();
        let listed = list::list_transactions(
            &client,
            &list::ListFilters::default(),
            &driver_options(),
            &bound(),
        )
        .await
        .unwrap();
        assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
        assert_named("ListTransactions", listed.into_values());
    }

    #[tokio::test(start_paused = true)]
    async fn transactions_describe_ends_by_its_deadline() {
        for (api, what) in [
            (api::FIND_COORDINATOR, "FindCoordinator"),
            (api::DESCRIBE_TRANSACTIONS, "DescribeTransactions"),
        ] {
            let cluster = StallCluster::demo();
            let client = connected(&cluster).await;
            cluster.stall(api);
            let start = Instant::now();
            let ids = vec!["orders-app".to_string(), "payments-app".to_string()];
            let described = describe_transactions(&client, ids, &driver_options(), &bound()).await;
            assert!(start.elapsed() <= BUDGET, "{what}: {:?}", start.elapsed());
            assert_named(what, described.into_values().map(|d| d.result));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn force_terminate_ends_by_its_deadline() {
        for (api, what) in [
            (api::FIND_COORDINATOR, "FindCoordinator"),
            (api::INIT_PRODUCER_ID, "InitProducerId"),
        ] {
            let cluster = StallCluster::demo();
            let client = connected(&cluster).await;
            cluster.stall(api);
            let start = Instant::now();
            let ids = vec!["orders-app".to_string()];
            let done = force_terminate(&client, ids, 60_000, &driver_options(), &bound()).await;
            assert!(start.elapsed() <= BUDGET, "{what}: {:?}", start.elapsed());
            assert_named(what, done.into_values());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn abort_ends_by_its_deadline_when_the_markers_stall() {
        let cluster = StallCluster::demo();
        let client = connected(&cluster).await;
        cluster.stall(api::WRITE_TXN_MARKERS);
        let start = Instant::now();
        let spec = AbortSpec {
            topic: "payments".into(),
            partition: 0,
            producer_id: 7003,
            producer_epoch: 0,
            coordinator_epoch: 0,
        };
        let done = abort(&client, vec![spec], &driver_options(), &bound()).await;
        assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
        assert!(cluster.asked(api::WRITE_TXN_MARKERS) > 0);
        assert_named("WriteTxnMarkers", done.into_values());
    }
}

/// Nothing listens on any bootstrap address: the watcher is told once,
/// after the first pass (not at the deadline, not per attempt), what is
/// retried; the bootstrap ends at the deadline naming every address.
#[tokio::test(start_paused = true)]
async fn nothing_listening_is_told_once_and_ends_at_the_deadline_naming_each_address() {
    let cluster = StallCluster::placed(2, &[]);
    cluster.refuse(1);
    cluster.refuse(2);
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    let start = tokio::time::Instant::now();
    let config = ClientConfig {
        on_retry: Some(Arc::new(move |r: &kdp_client::Retrying| {
            sink.lock().unwrap().push((start.elapsed(), r.to_string()))
        })),
        ..client_config(&cluster)
    };
    let bound = TimeBound::after(Duration::from_secs(5));
    let err = Client::connect_within(vec![addr_of(1), addr_of(2)], config, &bound)
        .await
        .unwrap_err();
    assert!(bound.is_past(), "{:?}", start.elapsed());
    let text = err.to_string();
    assert!(
        text.contains("b1:9092") && text.contains("b2:9092"),
        "{text}"
    );
    assert!(text.contains("did not finish within 5s"), "{text}");
    let told = told.lock().unwrap();
    assert_eq!(told.len(), 1, "{told:?}");
    let (when, what) = &told[0];
    assert!(*when < Duration::from_secs(1), "{when:?}");
    assert!(
        what.contains("b1:9092") && what.contains("b2:9092"),
        "{what}"
    );
}

/// A lookup that fails in a way no retry fixes (the broker has no
/// FindCoordinator) is the answer at once, not retried until the deadline.
#[tokio::test(start_paused = true)]
async fn an_unsupported_lookup_is_not_retried_until_the_deadline() {
    let cluster = StallCluster::placed(1, &[]);
    cluster.edit::<ApiVersionsRequest, _>(|_, _, resp| {
        resp.api_keys.retain(|k| k.api_key != api::FIND_COORDINATOR)
    });
    let client = Client::connect(cluster.bootstrap(), client_config(&cluster))
        .await
        .unwrap();
    let client = Arc::new(client);
    client.metadata(None).await.unwrap();
    let start = tokio::time::Instant::now();
    let opts = kdp_client::admin::DriverOptions::default();
    let bound = TimeBound::after(Duration::from_secs(30));
    let described = kdp_client::txn::describe::describe_transactions(
        &client,
        vec!["app".into()],
        &opts,
        &bound,
    )
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let e = described["app"].result.as_ref().unwrap_err();
    assert_eq!(e.code, ErrorCode::UNSUPPORTED_VERSION, "{e:?}");
    assert!(
        e.message
            .as_deref()
            .unwrap_or("")
            .contains("FindCoordinator"),
        "{e:?}"
    );
}

/// A driver run that retries tells the watcher once, naming the API and
/// why, however many rounds it takes.
#[tokio::test(start_paused = true)]
async fn a_retried_request_is_told_once_naming_the_api() {
    let cluster = StallCluster::placed(2, &[("t", 0, 2)]);
    cluster.stall_on(2, api::DESCRIBE_PRODUCERS);
    // broker 2 stays the leader: every round asks it again until the deadline
    let told = Arc::new(Mutex::new(Vec::new()));
    let sink = told.clone();
    let config = ClientConfig {
        on_retry: Some(Arc::new(move |r: &kdp_client::Retrying| {
            sink.lock().unwrap().push(r.to_string())
        })),
        ..client_config(&cluster)
    };
    let client = Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap());
    let bound = TimeBound::after(Duration::from_secs(30));
    let summary = kdp_client::describe_producers(client, &topic_t(), &bound, |_| {})
        .await
        .unwrap();
    assert_eq!(summary.failed, 1);
    assert!(cluster.asked(api::DESCRIBE_PRODUCERS) >= 2, "retried");
    let told = told.lock().unwrap();
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].starts_with("DescribeProducers: "), "{}", told[0]);
    assert!(told[0].contains("timed out"), "{}", told[0]);
}
