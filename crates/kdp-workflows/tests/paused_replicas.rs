//! `compare-replicas`' library call ([`describe_every_replica`]) against
//! kdp-server's demo cluster behind in-memory streams, each API it uses
//! stalled in turn, on tokio's paused clock: it ends by its deadline and
//! names what did not answer, so no caller can say "all replicas agree".

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::describe::resolve;
use kdp_client::{Client, ClientConfig, DescribeOptions, Error, TimeBound, TopicSelection};
use kdp_domain::diagnose::replicas::{Comparison, ReplicaError, Replicas, Verdict};
use kdp_test_support::StallCluster;
use kdp_wire::api;
use kdp_wire::ErrorCode;
use kdp_workflows::replicas::{
    compare_replicas, describe_every_replica, each_replica_settling, Comparer,
};
use tokio::time::Instant;

const BUDGET: Duration = Duration::from_secs(10);

async fn connected(cluster: &StallCluster) -> Arc<Client> {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
}

/// `compare-replicas` over the whole demo cluster with `stall` applied once
/// the client is connected; its answer and how long it took.
async fn compare_with(
    stall: impl FnOnce(&StallCluster),
) -> (
    Result<(Replicas, Vec<ReplicaError<Error>>), Error>,
    Duration,
) {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    stall(&cluster);
    let opts = DescribeOptions::default();
    let start = Instant::now();
    let r = describe_every_replica(&client, &opts, &TimeBound::after(BUDGET)).await;
    (r, start.elapsed())
}

/// The brokers whose replicas answered, over every partition.
fn answering(replicas: &Replicas) -> BTreeSet<i32> {
    replicas.values().flat_map(|b| b.keys().copied()).collect()
}

/// The demo cluster's own failure: payments-2's replica on broker 3 has a
/// storage error.
fn demo_own(f: &ReplicaError<Error>) -> bool {
    matches!(f, ReplicaError::Partition { partition, broker: 3, error }
        if partition.0 == "payments" && partition.1 == 2
            && error.code == ErrorCode::KAFKA_STORAGE_ERROR)
}

/// Every failure but the demo's own is `broker`'s, each partition of it timed out naming
/// `api`, and every partition is among them (each has a replica there).
fn assert_only_broker_failed(
    replicas: &Replicas,
    failures: &[ReplicaError<Error>],
    broker: i32,
    api: &str,
) {
    assert!(!failures.is_empty(), "a silent replica is reported");
    let mut failed = BTreeSet::new();
    for f in failures.iter().filter(|f| !demo_own(f)) {
        match f {
            ReplicaError::Partition {
                partition,
                broker: b,
                error,
            } => {
                assert_eq!(*b, broker, "{f:?}");
                assert_eq!(error.code, ErrorCode::REQUEST_TIMED_OUT, "{f:?}");
                let m = error.message.as_deref().unwrap_or_default();
                assert!(m.contains(api), "{api}: {m}");
                failed.insert(partition.clone());
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        failed,
        replicas.keys().cloned().collect::<BTreeSet<_>>(),
        "every partition has a replica on broker {broker}: each is named"
    );
    assert!(
        !answering(replicas).contains(&broker),
        "nothing from broker {broker}"
    );
}

#[tokio::test(start_paused = true)]
async fn with_nothing_stalled_every_replica_answers() {
    let (r, took) = compare_with(|_| {}).await;
    let (replicas, failures) = r.unwrap();
    assert!(took < BUDGET, "{took:?}");
    assert!(failures.iter().all(demo_own), "{failures:?}");
    assert_eq!(answering(&replicas), BTreeSet::from([1, 2, 3]));
}

/// Metadata stalled: the brokers cannot be listed; the call fails by its
/// deadline naming Metadata (before, it waited a request timeout per broker
/// past the deadline).
#[tokio::test(start_paused = true)]
async fn stalled_metadata_fails_by_the_deadline_naming_metadata() {
    let (r, took) = compare_with(|c| c.stall(api::METADATA)).await;
    assert!(took <= BUDGET, "took {took:?}");
    let e = r.unwrap_err();
    assert!(e.to_string().contains("Metadata"), "{e}");
}

/// ApiVersions stalled on broker 2 (the client reached broker 1 only): its
/// connection never opens; each of its replicas is named by the deadline.
#[tokio::test(start_paused = true)]
async fn stalled_api_versions_on_one_broker_names_its_replicas_by_the_deadline() {
    let (r, took) = compare_with(|c| c.stall_on(2, api::API_VERSIONS)).await;
    assert!(took <= BUDGET, "took {took:?}");
    let (replicas, failures) = r.unwrap();
    assert_eq!(answering(&replicas), BTreeSet::from([1, 3]));
    assert_only_broker_failed(&replicas, &failures, 2, "ApiVersions");
}

/// DescribeProducers stalled on one replica's broker: the others' answers
/// are kept, that replica of every partition is named, by the deadline.
#[tokio::test(start_paused = true)]
async fn stalled_describe_producers_on_one_replica_names_it_by_the_deadline() {
    let (r, took) = compare_with(|c| c.stall_on(3, api::DESCRIBE_PRODUCERS)).await;
    assert!(took <= BUDGET, "took {took:?}");
    let (replicas, failures) = r.unwrap();
    assert_eq!(answering(&replicas), BTreeSet::from([1, 2]));
    assert_only_broker_failed(&replicas, &failures, 3, "DescribeProducers");
}

/// The comparison's verdict over `ledger`, whose replicas agree in the
/// demo, with `stall` applied once the client is connected.
async fn ledger_verdict(stall: impl FnOnce(&StallCluster)) -> (Verdict, Duration) {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    stall(&cluster);
    let opts = DescribeOptions {
        topics: Some(vec![TopicSelection {
            name: "ledger".into(),
            partitions: None,
        }]),
        ..DescribeOptions::default()
    };
    let start = Instant::now();
    let c = compare_replicas(&client, &opts, &TimeBound::after(BUDGET))
        .await
        .unwrap();
    (c.verdict(), start.elapsed())
}

/// "All agree" is the library's verdict only when every replica answered:
/// with one broker's DescribeProducers stalled, the replicas that answered
/// still agree, and the verdict says the rest was not checked, by the
/// deadline.
#[tokio::test(start_paused = true)]
async fn a_silent_replica_turns_agreement_into_unchecked_by_the_deadline() {
    let (verdict, _) = ledger_verdict(|_| {}).await;
    assert_eq!(verdict, Verdict::Agree { partitions: 5 });
    let (verdict, took) = ledger_verdict(|c| c.stall_on(2, api::DESCRIBE_PRODUCERS)).await;
    assert!(took <= BUDGET, "took {took:?}");
    match verdict {
        Verdict::Unchecked { partitions, failed } => {
            assert_eq!(partitions, 5, "each partition has replicas that answered");
            assert!(failed > 0);
        }
        other => panic!("{other:?}"),
    }
}

/// A comparison's differences, timestamps as which replicas share them
/// (each twin demo cluster dates its producers from its own start).
fn same(c: &Comparison<Error>) -> Vec<String> {
    c.differences
        .iter()
        .map(|(tp, d)| {
            let values: Vec<String> = if d.field == "LastTimestamp" {
                let first: Vec<&String> = d.values.values().collect();
                let rank = |v: &String| first.iter().position(|f| *f == v);
                d.values
                    .iter()
                    .map(|(b, v)| format!("{b}:{:?}", rank(v)))
                    .collect()
            } else {
                d.values.iter().map(|(b, v)| format!("{b}:{v}")).collect()
            };
            format!("{tp:?} {} {} {values:?}", d.producer_id, d.field)
        })
        .collect()
}

/// Each partition compared as soon as its replicas have answered
/// ([`compare_every_replica`]) says what comparing every replica's kept
/// answers at the end ([`describe_every_replica`], then
/// [`Comparison::of`]) says, on twin demo clusters: with every replica
/// answering (the demo's own failed replica, payments-2 on broker 3,
/// included), and with one broker's replicas partly answering (its
/// DescribeProducers or ApiVersions stalled to the deadline): the same
/// differences, partitions and failures. Once the scan is over, no
/// partition is still held: a failed replica settles its partition too.
#[tokio::test(start_paused = true)]
async fn compared_as_they_answer_is_what_comparing_every_answer_says() {
    type Stall = fn(&StallCluster);
    let stalls: [(&str, Stall); 3] = [
        ("nothing", |_| {}),
        ("DescribeProducers on 3", |c| {
            c.stall_on(3, api::DESCRIBE_PRODUCERS)
        }),
        ("ApiVersions on 2", |c| c.stall_on(2, api::API_VERSIONS)),
    ];
    let opts = DescribeOptions::default();
    for (name, stall) in stalls {
        let (every, _) = compare_with(stall).await;
        let (replicas, failures) = every.unwrap();
        let whole = Comparison::of(&replicas, failures);
        assert!(
            !whole.differences.is_empty(),
            "{name}: the demo's replicas differ"
        );
        assert!(!whole.failures.is_empty(), "{name}: some replica failed");

        let twin = StallCluster::demo();
        let client = connected(&twin).await;
        stall(&twin);
        let bound = TimeBound::after(BUDGET);
        let resolved = resolve(&client, &opts, &bound).await.unwrap();
        let comparer = Comparer::new(&resolved, &[]);
        assert!(comparer.held() > 0, "{name}: every partition is expected");
        let (into, done) = (comparer.clone(), comparer.clone());
        let (_, failures) = each_replica_settling(
            &client,
            &opts,
            &bound,
            &[],
            resolved,
            move |b, t, p, ps| into.add(b, t, p, ps),
            move |b, tp| done.settled(b, tp),
        )
        .await
        .unwrap();
        assert_eq!(comparer.held(), 0, "{name}: every partition settled");
        let streamed = Comparison::of_compared(comparer.take(), failures);
        assert_eq!(same(&streamed), same(&whole), "{name}");
        assert_eq!(streamed.partitions, whole.partitions, "{name}");
        assert_eq!(
            format!("{:?}", streamed.failures),
            format!("{:?}", whole.failures),
            "{name}"
        );
        assert_eq!(streamed.verdict(), whole.verdict(), "{name}");

        // and the library call that streams
        let twin = StallCluster::demo();
        let client = connected(&twin).await;
        stall(&twin);
        let c = compare_replicas(&client, &opts, &TimeBound::after(BUDGET))
            .await
            .unwrap();
        assert_eq!(same(&c), same(&whole), "{name}");
        assert_eq!(c.partitions, whole.partitions, "{name}");
    }
}
