use std::collections::BTreeMap;

use kdp_domain::diagnose::pressure::{BrokerPressure, TopicPressure};

use super::*;
use crate::exporter::exposition::{encode, Format};

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn broker(b: i32, ids: u64, expiration_ms: Option<i64>) -> BrokerPressure {
    BrokerPressure {
        broker: b,
        answered: true,
        complete: true,
        producer_ids: ids,
        expiration_ms,
        expiring_within_hour: 1,
        past_expiration: 2,
        ..Default::default()
    }
}

fn topic(t: &str, ids: u64, max_epoch: i32, partial: bool) -> TopicPressure {
    TopicPressure {
        topic: t.into(),
        producer_ids: ids,
        max_epoch,
        partial,
        ..Default::default()
    }
}

/// `held[broker][topic] = ids`.
fn held(entries: &[(i32, &str, &[i64])]) -> BTreeMap<i32, BTreeMap<String, Vec<i64>>> {
    let mut h: BTreeMap<i32, BTreeMap<String, Vec<i64>>> = BTreeMap::new();
    for (b, t, ids) in entries {
        h.entry(*b).or_default().insert(t.to_string(), ids.to_vec());
    }
    h
}

fn text(scanned: Option<&Scanned>, t: &Tracker) -> String {
    let mut r = Registry::default();
    register(&mut r, scanned, t);
    encode(&r, Format::Text).expect("encodes")
}

/// A broker short of a partition, a topic short of a replica, a broker
/// without its setting: no series, never a count of part of it; a topic
/// with no producer has no max epoch.
#[test]
fn only_whole_counts_are_published() {
    let mut p = Pressure {
        brokers: vec![
            broker(1, 10, Some(3_600_000)),
            broker(2, 7, None),
            broker(3, 4, Some(1)),
            BrokerPressure {
                broker: 4,
                ..Default::default()
            },
        ],
        topics: vec![
            topic("whole", 12, 32_000, false),
            topic("short", 9, 5, true),
            topic("empty", 0, -1, false),
        ],
        ..Default::default()
    };
    p.unanswered.insert(3, ["short".to_string()].into());
    let t = Tracker::new(PressureConfig::default());
    let out = text(Some(&Scanned::Report(Box::new(p))), &t);
    let s = |series: &str| sample(&out, series);
    assert_eq!(s(r#"kdp_broker_producer_ids{broker="1"}"#), Some(10.0));
    assert_eq!(
        s(r#"kdp_broker_producer_ids_expiring_within_hour{broker="1"}"#),
        Some(1.0)
    );
    assert_eq!(
        s(r#"kdp_broker_producer_ids_past_expiration{broker="1"}"#),
        Some(2.0)
    );
    // no setting: a count, no forecast
    assert_eq!(s(r#"kdp_broker_producer_ids{broker="2"}"#), Some(7.0));
    assert!(
        !out.contains(r#"expiring_within_hour{broker="2"}"#),
        "{out}"
    );
    assert!(!out.contains(r#"past_expiration{broker="2"}"#), "{out}");
    // a partition unanswered, or no answer at all: nothing
    assert!(!out.contains(r#"{broker="3"}"#), "{out}");
    assert!(!out.contains(r#"{broker="4"}"#), "{out}");
    assert_eq!(s(r#"kdp_topic_producer_ids{topic="whole"}"#), Some(12.0));
    assert_eq!(
        s(r#"kdp_topic_max_producer_epoch{topic="whole"}"#),
        Some(32_000.0)
    );
    assert!(!out.contains(r#"{topic="short"}"#), "{out}");
    assert_eq!(s(r#"kdp_topic_producer_ids{topic="empty"}"#), Some(0.0));
    assert!(
        !out.contains(r#"kdp_topic_max_producer_epoch{topic="empty"}"#),
        "{out}"
    );
    // never per producer id
    assert!(!out.contains("producer_id="), "{out}");
    // a scan that could not list the brokers: no gauge
    let out = text(Some(&Scanned::Failed), &t);
    assert!(!out.contains("kdp_broker_producer_ids{"), "{out}");
}

fn report(brokers: &[i32], h: BTreeMap<i32, BTreeMap<String, Vec<i64>>>) -> Pressure {
    let topics: BTreeSet<&String> = h.values().flat_map(|t| t.keys()).collect();
    Pressure {
        brokers: brokers.iter().map(|&b| broker(b, 0, None)).collect(),
        topics: topics.into_iter().map(|t| topic(t, 0, 0, false)).collect(),
        held: h,
        ..Default::default()
    }
}

fn counted(t: &Tracker, label: (&'static str, &str)) -> u64 {
    let fam = if label.0 == "broker" {
        &t.broker_new
    } else {
        &t.topic_new
    };
    fam.get_or_create(&vec![(label.0, label.1.to_string())])
        .get()
}

/// The first answer is the baseline; a new topic on a known broker is new;
/// ids that go are not negative; a topic gone from a complete scan loses its
/// counter series.
#[test]
fn new_ids_against_each_brokers_last_answer() {
    let mut t = Tracker::new(PressureConfig::default());
    t.count_new(&mut report(&[1], held(&[(1, "a", &[1, 2, 3])])));
    assert_eq!(counted(&t, ("broker", "1")), 0);
    t.count_new(&mut report(
        &[1],
        held(&[(1, "a", &[2, 3, 4, 5]), (1, "b", &[9])]),
    ));
    assert_eq!(counted(&t, ("broker", "1")), 3, "4, 5, and b's 9");
    assert_eq!(counted(&t, ("topic", "a")), 2);
    assert_eq!(counted(&t, ("topic", "b")), 1);
    // broker 2 appears: its baseline
    t.count_new(&mut report(
        &[1, 2],
        held(&[(1, "a", &[2, 3, 4, 5]), (2, "a", &[7, 8])]),
    ));
    assert_eq!(counted(&t, ("broker", "2")), 0);
    assert_eq!(counted(&t, ("broker", "1")), 3);
    let out = text(None, &t);
    assert!(
        !out.contains(r#"kdp_topic_new_producer_ids_total{topic="b"}"#),
        "b is gone: {out}"
    );
    assert!(out.contains(r#"kdp_topic_new_producer_ids_total{topic="a"}"#));
    // a topic broker 2 answered in part keeps its last answer; b
    let mut short = report(&[1, 2], held(&[(1, "a", &[2]), (2, "a", &[7, 8, 10])]));
    short.unanswered.insert(2, ["a".to_string()].into());
    short.partial = true;
    t.count_new(&mut short);
    assert_eq!(counted(&t, ("broker", "2")), 0);
    t.count_new(&mut report(
        &[1, 2],
        held(&[(1, "a", &[2]), (2, "a", &[7, 8, 10])]),
    ));
    assert_eq!(counted(&t, ("broker", "2")), 1, "10, once");
}

/// What the tracker keeps follows the ids brokers hold now, not the number
/// of scans: a hundred scans of churning ids (a tenth replaced each scan)
/// keep as many lists and bytes as the second, every churned id is counted,
/// and a topic gone takes its lists with it.
#[test]
fn kept_state_does_not_grow_with_the_scans() {
    let mut t = Tracker::new(PressureConfig::default());
    let scan = |n: i64| {
        // 1,000 ids per list, 100 of them new each scan (from ids whose
        // first distance takes three bytes throughout)
        let a: Vec<i64> = (1_000_000 + n * 100..1_001_000 + n * 100).collect();
        let b: Vec<i64> = (1_500_000 + n * 100..1_501_000 + n * 100).collect();
        report(
            &[1, 2],
            held(&[(1, "a", &a), (1, "b", &b), (2, "a", &a), (2, "b", &b)]),
        )
    };
    t.count_new(&mut scan(0));
    t.count_new(&mut scan(1));
    let second = t.kept();
    assert_eq!(second.0, 4);
    // a byte or two per id, not eight
    assert!(second.1 < 4 * 1_000 * 2, "{second:?}");
    for n in 2..100 {
        t.count_new(&mut scan(n));
        assert_eq!(t.kept(), second, "after scan {n}");
    }
    assert_eq!(counted(&t, ("broker", "1")), 99 * 200);
    assert_eq!(counted(&t, ("topic", "a")), 99 * 200);
    t.count_new(&mut report(
        &[1, 2],
        held(&[(1, "a", &[1]), (2, "a", &[1])]),
    ));
    assert_eq!(t.kept(), (2, 2));
}

/// A lean scan's ids come as delta-encoded sets: the counters over scans of
/// churning ids are the ones the plain lists give, scan by scan.
#[test]
fn new_ids_from_sets_count_as_from_lists() {
    let (mut lists, mut sets) = (
        Tracker::new(PressureConfig::default()),
        Tracker::new(PressureConfig::default()),
    );
    let scan = |n: i64| {
        let a: Vec<i64> = (n * 7..n * 7 + 50).chain([9_000 + n % 3]).collect();
        let b: Vec<i64> = (0..40).map(|i| i * (n % 4 + 1)).collect();
        report(
            &[1, 2],
            held(&[
                (1, "a", &a),
                (1, "b", &b),
                (2, "a", &b[..(n as usize % 40)]),
            ]),
        )
    };
    for n in 0..30 {
        lists.count_new(&mut scan(n));
        let mut as_sets = scan(n);
        for (b, topics) in std::mem::take(&mut as_sets.held) {
            for (t, ids) in topics {
                as_sets
                    .held_sets
                    .entry(b)
                    .or_default()
                    .insert(t, IdSet::from_sorted(&ids));
            }
        }
        sets.count_new(&mut as_sets);
        for label in [
            ("broker", "1"),
            ("broker", "2"),
            ("topic", "a"),
            ("topic", "b"),
        ] {
            assert_eq!(
                counted(&sets, label),
                counted(&lists, label),
                "{label:?} after scan {n}"
            );
        }
        assert_eq!(sets.kept(), lists.kept());
    }
    assert!(counted(&lists, ("broker", "1")) > 0);
    assert!(counted(&lists, ("broker", "2")) > 0);
}
