//! The admin driver with lookup strategies other than DescribeProducers'
//! (coordinator of a key, every broker), on the in-memory cluster of
//! kdp-test-support and tokio's paused clock. DescribeProducers stands in
//! as the carrier: each key travels as a topic name, whose partition 0 is
//! on every broker.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kdp_client::admin::{
    drive, AdminHandler, AllBrokers, ChosenBroker, Coordinator, CoordinatorFuture,
    CoordinatorLookup, DriverOptions, KeyOutcome, KeyResult,
};
use kdp_client::Client;
use kdp_client::TimeBound;
use kdp_domain::KeyError;
use kdp_test_support::StallCluster;
use kdp_wire::api;
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse, TopicRequest};
use kdp_wire::ErrorCode;

/// The default bound: 30 s from now, Kafka's request timeout and retries.
fn bound() -> TimeBound {
    TimeBound::after(std::time::Duration::from_secs(30))
}

/// Keys are names; the value is the producer id the broker answered with.
struct Names {
    /// Answer Retry without refresh for the first response to this key.
    retry_once: Option<String>,
    retried: AtomicUsize,
}

impl AdminHandler for Names {
    type Key = String;
    type Value = i64;
    type Request = DescribeProducersRequest;
    type Response = DescribeProducersResponse;

    fn build_request(&self, _broker: i32, keys: &[String]) -> DescribeProducersRequest {
        DescribeProducersRequest {
            topics: keys
                .iter()
                .map(|k| TopicRequest {
                    name: k.clone(),
                    partition_indexes: vec![0],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        _broker: i32,
        _keys: &[String],
        resp: DescribeProducersResponse,
    ) -> Vec<(String, KeyOutcome<i64>)> {
        resp.topics
            .into_iter()
            .map(|t| {
                if self.retry_once.as_ref() == Some(&t.name)
                    && self.retried.fetch_add(1, Ordering::SeqCst) == 0
                {
                    let reason = KeyError::broker(ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, None);
                    return (
                        t.name,
                        KeyOutcome::Retry {
                            reason,
                            refresh: false,
                        },
                    );
                }
                let id = t.partitions[0].active_producers[0].producer_id;
                (t.name, KeyOutcome::Done(id))
            })
            .collect()
    }
}

fn names(retry_once: Option<&str>) -> Names {
    Names {
        retry_once: retry_once.map(String::from),
        retried: AtomicUsize::new(0),
    }
}

/// "a" has no coordinator on the first lookup (COORDINATOR_NOT_AVAILABLE,
/// retriable), then broker 1; "b" is on broker 2 from the start.
struct FakeFindCoordinator {
    calls: Mutex<Vec<Vec<String>>>,
}

impl CoordinatorLookup<String> for FakeFindCoordinator {
    fn find<'a>(
        &'a self,
        _client: &'a Client,
        keys: &'a [String],
        _timeout: Duration,
    ) -> CoordinatorFuture<'a, String> {
        Box::pin(async move {
            let mut calls = self.calls.lock().unwrap();
            calls.push(keys.to_vec());
            let first = calls.len() == 1;
            let mut found = BTreeMap::new();
            for k in keys {
                let r = match (k.as_str(), first) {
                    ("a", true) => {
                        Err(KeyError::broker(ErrorCode::COORDINATOR_NOT_AVAILABLE, None))
                    }
                    ("a", false) => Ok(1),
                    _ => Ok(2),
                };
                found.insert(k.clone(), r);
            }
            Ok(found)
        })
    }
}

/// Three brokers; every key's topic has a replica on each, and broker `b`
/// answers for it with producer `b * 100` (partition 0).
fn cluster() -> StallCluster {
    StallCluster::placed(
        3,
        &[
            ("a", 0, 1),
            ("b", 0, 2),
            ("from-1", 0, 1),
            ("from-2", 0, 2),
            ("from-3", 0, 3),
        ],
    )
}

async fn client(cluster: &StallCluster) -> Arc<Client> {
    cluster.client().await
}

async fn run<S: kdp_client::admin::LookupStrategy<String>>(
    client: &Arc<Client>,
    handler: &Names,
    strategy: &mut S,
    keys: &[&str],
) -> Vec<KeyResult<String, i64>> {
    let mut results = Vec::new();
    drive(
        client,
        handler,
        strategy,
        keys.iter().map(|k| k.to_string()).collect(),
        &DriverOptions::default(),
        &bound(),
        |batch| results.extend(batch.results),
    )
    .await;
    results.sort_by(|a, b| a.key.cmp(&b.key));
    results
}

#[tokio::test(start_paused = true)]
async fn a_key_without_a_coordinator_is_looked_up_again() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let lookup = FakeFindCoordinator {
        calls: Mutex::new(Vec::new()),
    };
    let mut strategy = Coordinator::new(lookup);
    let handler = names(None);
    let results = run(&client, &handler, &mut strategy, &["a", "b"]).await;
    let got: Vec<_> = results
        .iter()
        .map(|r| (r.key.as_str(), r.broker, r.result.clone()))
        .collect();
    // StallCluster::placed: producer id = broker * 100 + partition
    assert_eq!(got, vec![("a", Some(1), Ok(100)), ("b", Some(2), Ok(200))]);
    let asked = cluster.asked_by(api::DESCRIBE_PRODUCERS);
    assert_eq!(asked, vec![2, 1], "b at once, a after the second lookup");
}

#[tokio::test(start_paused = true)]
async fn a_retry_without_refresh_asks_the_same_broker_without_a_new_lookup() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let lookup = Arc::new(FakeFindCoordinator {
        calls: Mutex::new(Vec::new()),
    });
    struct Shared(Arc<FakeFindCoordinator>);
    impl CoordinatorLookup<String> for Shared {
        fn find<'a>(
            &'a self,
            c: &'a Client,
            k: &'a [String],
            t: Duration,
        ) -> CoordinatorFuture<'a, String> {
            self.0.find(c, k, t)
        }
    }
    let mut strategy = Coordinator::new(Shared(lookup.clone()));
    let handler = names(Some("b"));
    let results = run(&client, &handler, &mut strategy, &["b"]).await;
    assert_eq!(results[0].result, Ok(200));
    assert_eq!(cluster.asked(api::DESCRIBE_PRODUCERS), 2, "asked twice");
    assert_eq!(lookup.calls.lock().unwrap().len(), 1, "looked up once");
}

#[tokio::test(start_paused = true)]
async fn every_broker_is_asked_once() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let keys = AllBrokers::keys(&client).await.unwrap();
    assert_eq!(keys, vec![1, 2, 3]);

    struct PerBroker;
    impl AdminHandler for PerBroker {
        type Key = i32;
        type Value = i64;
        type Request = DescribeProducersRequest;
        type Response = DescribeProducersResponse;
        fn build_request(&self, broker: i32, _keys: &[i32]) -> DescribeProducersRequest {
            names(None).build_request(broker, &[format!("from-{broker}")])
        }
        fn handle_response(
            &self,
            broker: i32,
            _keys: &[i32],
            resp: DescribeProducersResponse,
        ) -> Vec<(i32, KeyOutcome<i64>)> {
            let id = resp.topics[0].partitions[0].active_producers[0].producer_id;
            vec![(broker, KeyOutcome::Done(id))]
        }
    }
    let mut results = Vec::new();
    drive(
        &client,
        &PerBroker,
        &mut AllBrokers::default(),
        keys,
        &DriverOptions::default(),
        &bound(),
        |batch| results.extend(batch.results),
    )
    .await;
    results.sort_by_key(|r| r.key);
    let got: Vec<_> = results.iter().map(|r| (r.key, r.result.clone())).collect();
    assert_eq!(got, vec![(1, Ok(100)), (2, Ok(200)), (3, Ok(300))]);
    assert_eq!(cluster.asked(api::DESCRIBE_PRODUCERS), 3);
}

/// Copies of a [`Counted`] key made anywhere.
static KEY_COPIES: AtomicUsize = AtomicUsize::new(0);

/// A name that counts its copies.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Counted(String);

impl Clone for Counted {
    fn clone(&self) -> Self {
        KEY_COPIES.fetch_add(1, Ordering::SeqCst);
        Counted(self.0.clone())
    }
}

/// [`Names`] over counted keys: the answers' keys are made from the
/// response, never copied from the keys asked.
struct CountedNames(Names);

impl AdminHandler for CountedNames {
    type Key = Counted;
    type Value = i64;
    type Request = DescribeProducersRequest;
    type Response = DescribeProducersResponse;

    fn build_request(&self, broker: i32, keys: &[Counted]) -> DescribeProducersRequest {
        let names: Vec<String> = keys.iter().map(|k| k.0.clone()).collect();
        self.0.build_request(broker, &names)
    }

    fn handle_response(
        &self,
        broker: i32,
        _keys: &[Counted],
        resp: DescribeProducersResponse,
    ) -> Vec<(Counted, KeyOutcome<i64>)> {
        self.0
            .handle_response(broker, &[], resp)
            .into_iter()
            .map(|(k, o)| (Counted(k), o))
            .collect()
    }
}

/// The driver moves each key into its request and back, never copying it:
/// not for the lookup (a strategy that needs no key), not to ask, and not
/// for a key asked again in the next round.
#[tokio::test(start_paused = true)]
async fn keys_are_moved_into_their_requests_not_copied() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let mut results = Vec::new();
    drive(
        &client,
        &CountedNames(names(Some("a"))),
        &mut ChosenBroker::new(1),
        vec![Counted("a".into()), Counted("b".into())],
        &DriverOptions::default(),
        &bound(),
        |batch| results.extend(batch.results),
    )
    .await;
    results.sort_by(|a, b| a.key.cmp(&b.key));
    let got: Vec<_> = results
        .iter()
        .map(|r| (r.key.0.as_str(), r.result.clone()))
        .collect();
    assert_eq!(got, vec![("a", Ok(100)), ("b", Ok(100))]);
    // "a" was retried: asked twice, "b" once
    assert_eq!(cluster.asked(api::DESCRIBE_PRODUCERS), 2);
    assert_eq!(KEY_COPIES.load(Ordering::SeqCst), 0);
}
