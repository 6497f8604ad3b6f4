use super::*;
use crate::diagnose::replicas::Replicas;

const NOW: i64 = 1_800_000_000_000;

fn p(id: i64, epoch: i32, idle_ms: Option<i64>, coord: i32, txn: i64) -> ProducerState {
    ProducerState {
        producer_id: id,
        producer_epoch: epoch,
        last_timestamp: idle_ms.map_or(-1, |i| NOW - i),
        coordinator_epoch: coord,
        current_txn_start_offset: txn,
        ..Default::default()
    }
}

#[test]
fn prefix_removes_counters_and_uuids() {
    assert_eq!(prefix("flink-sink-3-17"), ("flink-sink", Tail::Counter));
    assert_eq!(prefix("orders_42"), ("orders", Tail::Counter));
    assert_eq!(prefix("job7"), ("job", Tail::Counter));
    assert_eq!(
        prefix("fn-1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
        ("fn", Tail::Uuid)
    );
    assert_eq!(
        prefix("fn-1b4e28ba-2fa1-11d2-883f-0016d3cca427-3"),
        ("fn", Tail::Uuid)
    );
    assert_eq!(prefix("payments"), ("payments", Tail::None));
    assert_eq!(prefix("12345"), ("12345", Tail::None));
    assert_eq!(prefix(""), ("", Tail::None));
    // a uuid alone is its own prefix: nothing would be left
    let u = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
    assert_eq!(prefix(u), (u, Tail::None));
    // not a uuid: a g among the hex digits
    assert_eq!(
        prefix("fn-1b4e28ba-2fa1-11d2-883f-0016d3ccg427"),
        ("fn-1b4e28ba-2fa1-11d2-883f-0016d3ccg", Tail::Counter)
    );
    // multi-byte characters never split
    assert_eq!(prefix("zürich-é9"), ("zürich-é", Tail::Counter));
}

#[test]
fn prefixes_count_ids_and_flag_one_per_task() {
    let v = prefixes(["sink-1", "sink-2", "sink-3", "billing", "other-9"]);
    assert_eq!(v[0].prefix, "sink");
    assert_eq!(v[0].transactional_ids, 3);
    assert!(v[0].one_per_task());
    let billing = v.iter().find(|c| c.prefix == "billing").unwrap();
    assert!(!billing.one_per_task());
    let other = v.iter().find(|c| c.prefix == "other").unwrap();
    assert!(
        !other.one_per_task(),
        "one id under a counter is not a pattern"
    );
}

#[test]
fn transactional_rule() {
    assert!(is_transactional(&p(1, 0, None, 0, -1)));
    assert!(is_transactional(&p(1, 0, None, -1, 5)));
    assert!(!is_transactional(&p(1, 0, None, -1, -1)));
}

#[test]
fn expiry_boundaries() {
    let exp = Some(DAY_MS);
    assert_eq!(
        expiry(&p(1, 0, Some(DAY_MS), -1, -1), exp, NOW),
        Expiry::Past
    );
    assert_eq!(
        expiry(&p(1, 0, Some(DAY_MS - 1), -1, -1), exp, NOW),
        Expiry::In(1)
    );
    assert_eq!(
        expiry(&p(1, 0, Some(0), -1, -1), exp, NOW),
        Expiry::In(DAY_MS)
    );
    assert_eq!(expiry(&p(1, 0, None, -1, -1), exp, NOW), Expiry::Unknown);
    assert_eq!(
        expiry(&p(1, 0, Some(5), -1, -1), None, NOW),
        Expiry::Unknown
    );
    assert_eq!(
        expiry(&p(1, 0, Some(2 * DAY_MS), 0, 7), exp, NOW),
        Expiry::OpenTransaction
    );
}

fn inputs(replicas: &Replicas) -> Inputs<'_> {
    Inputs {
        replicas: Some(replicas),
        brokers: [1, 2, 3].into(),
        expiration_ms: [(1, DAY_MS), (2, DAY_MS)].into(),
        now_ms: NOW,
        epoch_margin: DEFAULT_EPOCH_MARGIN,
        top: 1,
        ..Default::default()
    }
}

fn cluster() -> Replicas {
    let mut r = Replicas::new();
    // broker 1 leads, 2 follows; producer 10 on both replicas
    r.insert(
        ("orders".into(), 0),
        [
            (
                1,
                vec![
                    p(10, 5, Some(DAY_MS - HOUR_MS), -1, -1), // expires in exactly 1 h
                    p(11, MAX_EPOCH - DEFAULT_EPOCH_MARGIN, Some(10), 3, -1), // at the margin
                    p(12, MAX_EPOCH, None, 3, 0),
                ],
            ),
            (2, vec![p(10, 5, Some(DAY_MS - HOUR_MS - 1), -1, -1)]),
        ]
        .into(),
    );
    r.insert(
        ("audit".into(), 0),
        [(
            1,
            vec![p(
                13,
                MAX_EPOCH - DEFAULT_EPOCH_MARGIN - 1,
                Some(DAY_MS + 5),
                -1,
                -1,
            )],
        )]
        .into(),
    );
    r
}

#[test]
fn counts_per_broker_as_the_gauge_does() {
    let r = cluster();
    let mut inp = inputs(&r);
    inp.transactional_ids = [(12, "sink-4".to_string())].into();
    let out = pressure(&inp);
    let b1 = &out.brokers[0];
    assert_eq!((b1.broker, b1.producer_ids), (1, 4));
    assert_eq!((b1.transactional, b1.idempotent), (2, 2));
    assert_eq!(b1.oldest_idle_ms, Some(DAY_MS + 5));
    // idle times known: 10, DAY-HOUR, DAY+5 -> median DAY-HOUR
    assert_eq!(b1.median_idle_ms, Some(DAY_MS - HOUR_MS));
    assert_eq!(b1.expiring_within_hour, 1);
    assert_eq!(b1.expiring_within_day, 2);
    assert_eq!(b1.past_expiration, 1);
    let b2 = &out.brokers[1];
    assert_eq!(b2.producer_ids, 1);
    assert_eq!(b2.expiring_within_hour, 0, "one ms past the hour");
    assert_eq!(b2.expiring_within_day, 1);
    let b3 = &out.brokers[2];
    assert_eq!((b3.broker, b3.producer_ids, b3.complete), (3, 0, true));
    assert_eq!(b3.median_idle_ms, None);
    assert_eq!(out.total_producer_ids, 5);
    assert!(!out.partial);
    assert_eq!(out.top_topics, vec!["orders".to_string()]);
    let orders = out.topics.iter().find(|t| t.topic == "orders").unwrap();
    assert_eq!((orders.producer_ids, orders.distinct_producers), (4, 3));
    assert_eq!(orders.max_epoch, MAX_EPOCH);
    assert_eq!(orders.near_exhaustion, 2);
    // 12 at 32767 first, then 11 exactly at the margin; 13 one below it is out
    let near: Vec<(i64, i32)> = out
        .epochs_near_exhaustion
        .iter()
        .map(|n| (n.producer_id, n.epochs_left))
        .collect();
    assert_eq!(near, vec![(12, 0), (11, DEFAULT_EPOCH_MARGIN)]);
    assert_eq!(
        out.epochs_near_exhaustion[0].transactional_id.as_deref(),
        Some("sink-4")
    );
    assert_eq!(out.epochs_near_exhaustion[1].transactional_id, None);
}

#[test]
fn a_failed_broker_makes_the_totals_partial() {
    let r = cluster();
    let mut inp = inputs(&r);
    inp.failed = [3].into();
    let out = pressure(&inp);
    assert!(out.partial);
    assert!(!out.brokers[2].answered);
    assert!(out.brokers[0].answered);
    let mut inp = inputs(&r);
    inp.incomplete = [1].into();
    let out = pressure(&inp);
    assert!(
        out.partial,
        "a partition that failed makes the totals partial"
    );
    assert!(out.brokers[0].answered && !out.brokers[0].complete);
    assert_eq!(
        out.brokers[0].producer_ids, 4,
        "what it answered still counts"
    );
}

#[test]
fn churn_counts_new_and_gone_per_second() {
    let r = cluster();
    let before = pressure(&inputs(&r));
    let mut r2 = cluster();
    r2.get_mut(&("orders".to_string(), 0))
        .unwrap()
        .get_mut(&1)
        .unwrap()
        .retain(|p| p.producer_id != 10);
    for id in 20..24 {
        r2.get_mut(&("orders".to_string(), 0))
            .unwrap()
            .get_mut(&1)
            .unwrap()
            .push(p(id, 0, Some(1), -1, -1));
    }
    let mut inp = inputs(&r2);
    inp.now_ms = NOW + 2_000;
    inp.failed = [2].into();
    let now = pressure(&inp);
    let c = churn(&before, &now);
    let orders1 = c
        .iter()
        .find(|c| c.broker == 1 && c.topic == "orders")
        .unwrap();
    assert_eq!((orders1.new, orders1.gone), (4, 1));
    assert_eq!(orders1.new_per_second, Some(2.0));
    let audit1 = c
        .iter()
        .find(|c| c.broker == 1 && c.topic == "audit")
        .unwrap();
    assert_eq!((audit1.new, audit1.gone), (0, 0));
    assert!(
        c.iter().all(|c| c.broker != 2),
        "a broker that did not answer has no churn"
    );
    // the report round-trips through JSON, as --since reads it
    let json = serde_json::to_string(&before).unwrap();
    let back: Pressure = serde_json::from_str(&json).unwrap();
    assert_eq!(back, before);
}

#[test]
fn only_brokers_and_lost_scans() {
    let r = cluster();
    let mut inp = inputs(&r);
    inp.only_brokers = [2].into();
    let out = pressure(&inp);
    assert_eq!(out.brokers.len(), 1);
    assert_eq!(out.total_producer_ids, 1);
    assert!(out.topics.iter().all(|t| t.topic == "orders"));
    assert!(!out.partial);
    inp.lost = 1;
    assert!(pressure(&inp).partial);
}

fn near(producer_id: i64, producer_epoch: i32) -> NearEpoch {
    NearEpoch {
        producer_id,
        producer_epoch,
        epochs_left: MAX_EPOCH - producer_epoch,
        transactional_id: None,
        topics: BTreeSet::new(),
        epochs_per_hour: None,
        exhausted_at_ms: None,
    }
}

#[test]
fn epoch_rates_forecast_exhaustion_only_from_a_measured_rate() {
    let before = Pressure {
        scanned_at_ms: 0,
        epochs_near_exhaustion: vec![near(1, 32_000), near(2, 32_100), near(3, 32_500)],
        ..Default::default()
    };
    // an hour later: 1 used 100 epochs, 2 none, 3 went back (a new id), 4 is new
    let mut now = Pressure {
        scanned_at_ms: 3_600_000,
        epochs_near_exhaustion: vec![
            near(1, 32_100),
            near(2, 32_100),
            near(3, 32_400),
            near(4, 32_000),
        ],
        ..Default::default()
    };
    epoch_rates(&before, &mut now);
    let n = &now.epochs_near_exhaustion;
    assert_eq!(n[0].epochs_per_hour, Some(100.0));
    // 667 left at 100 an hour: 6.67 hours after the second scan
    assert_eq!(n[0].exhausted_at_ms, Some(3_600_000 + 24_012_000));
    for other in &n[1..] {
        assert_eq!(
            (other.epochs_per_hour, other.exhausted_at_ms),
            (None, None),
            "{other:?}"
        );
    }
    // no time between the scans: no rate
    let mut same = now.clone();
    same.epochs_near_exhaustion = vec![near(1, 32_100)];
    let mut at_zero = before.clone();
    at_zero.scanned_at_ms = same.scanned_at_ms;
    epoch_rates(&at_zero, &mut same);
    assert_eq!(same.epochs_near_exhaustion[0].epochs_per_hour, None);
}

#[test]
fn an_epoch_fence_counts_only_past_its_timeout_and_with_a_known_start() {
    let fence = |start| EpochFence {
        transactional_id: "t".into(),
        producer_id: 1,
        coordinator: 1,
        transaction_start_time_ms: start,
        transaction_timeout_ms: 60_000,
    };
    assert!(
        !fence(Some(0)).past_timeout(60_000),
        "at the timeout exactly"
    );
    assert!(fence(Some(0)).past_timeout(60_001));
    assert!(!fence(None).past_timeout(i64::MAX));
    let replicas = cluster();
    let mut inp = inputs(&replicas);
    inp.now_ms = 100_000;
    inp.epoch_fences = vec![fence(Some(0)), fence(Some(90_000)), fence(None)];
    let p = pressure(&inp);
    assert_eq!(p.epoch_fences_past_timeout, vec![fence(Some(0))]);
}

#[test]
fn sorted_lists_are_merged_without_repeats() {
    assert_eq!(count_distinct(vec![&[1, 3, 5], &[2, 3, 6], &[], &[5]]), 5);
    assert_eq!(count_distinct(vec![]), 0);
    assert_eq!(count_missing(&[1, 2, 5, 9], &[2, 3, 9]), 2);
    assert_eq!(count_missing(&[], &[1]), 0);
    assert_eq!(count_missing(&[4], &[]), 1);
}

/// A topic a broker answered for in part, in either scan, has no churn on
/// that broker (its missing ids are unknown, not gone); the others do.
#[test]
fn churn_leaves_out_what_either_scan_did_not_fully_see() {
    let r = cluster();
    let before = pressure(&inputs(&r));
    let mut now = before.clone();
    now.scanned_at_ms += 1_000;
    now.held
        .get_mut(&1)
        .unwrap()
        .get_mut("orders")
        .unwrap()
        .clear();
    now.held
        .get_mut(&1)
        .unwrap()
        .get_mut("audit")
        .unwrap()
        .push(99);
    now.unanswered.insert(1, ["orders".to_string()].into());
    let c = churn(&before, &now);
    assert!(
        c.iter().all(|c| !(c.broker == 1 && c.topic == "orders")),
        "{c:?}"
    );
    let audit = c
        .iter()
        .find(|c| c.broker == 1 && c.topic == "audit")
        .unwrap();
    assert_eq!((audit.new, audit.gone), (1, 0));
    // a broker that did not answer before: nothing it holds now is new
    let mut was_silent = before.clone();
    was_silent.brokers[1].answered = false;
    was_silent.held.remove(&2);
    assert!(churn(&was_silent, &now).iter().all(|c| c.broker != 2));
}

/// Answers of 4 brokers for 3 topics of 5 partitions, from a fixed seed:
/// ids repeated across partitions and brokers, idle times on both sides of
/// the expiry boundaries, open transactions, unknown timestamps, epochs near
/// the end.
fn churning_cluster(seed: u64) -> Replicas {
    let mut x = seed | 1;
    let mut next = move |n: u64| {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut r = Replicas::new();
    for t in ["a", "b", "c"] {
        for part in 0..5 {
            let mut by_broker = BTreeMap::new();
            for b in 1..=4 {
                let producers = (0..next(40))
                    .map(|_| {
                        let idle = match next(6) {
                            0 => None,
                            1 => Some(DAY_MS - HOUR_MS + next(3) as i64 - 1),
                            2 => Some(DAY_MS + next(3) as i64 - 1),
                            _ => Some(next(2 * DAY_MS as u64) as i64),
                        };
                        let epoch = if next(10) == 0 {
                            MAX_EPOCH - next(2000) as i32
                        } else {
                            next(100) as i32
                        };
                        let txn = if next(4) == 0 { next(100) as i64 } else { -1 };
                        p(
                            1_000 + next(300) as i64,
                            epoch,
                            idle,
                            next(3) as i32 - 1,
                            txn,
                        )
                    })
                    .collect();
                by_broker.insert(b, producers);
            }
            r.insert((t.into(), part), by_broker);
        }
    }
    r
}

#[test]
fn a_lean_fold_reports_what_the_full_fold_reports() {
    for seed in [1, 7, 42, 2026] {
        let replicas = churning_cluster(seed);
        let mut inp = inputs(&replicas);
        inp.brokers = [1, 2, 3, 4, 5].into();
        // broker 3's setting unknown; broker 5 answered nothing
        inp.expiration_ms = [(1, DAY_MS), (2, DAY_MS), (4, HOUR_MS)].into();
        inp.failed = [5].into();
        let full = pressure(&inp);

        let mut fold = Fold::new(NOW, DEFAULT_EPOCH_MARGIN).lean();
        for b in &inp.brokers {
            fold.broker(*b);
        }
        fold.failed_broker(5);
        // broker 1's setting known before its answers, 2's halfway, 4's
        // only at the end
        fold.expiration(1, DAY_MS);
        for (i, ((topic, _), by_broker)) in replicas.iter().enumerate() {
            if i == replicas.len() / 2 {
                fold.expiration(2, DAY_MS);
            }
            for (b, producers) in by_broker {
                fold.add(*b, topic, producers);
            }
        }
        let lean = fold.finish(&inp.expiration_ms, &BTreeMap::new(), 1, &[]);

        assert!(lean.held.is_empty());
        let sets: BTreeMap<i32, BTreeMap<String, Vec<i64>>> = lean
            .held_sets
            .iter()
            .map(|(b, t)| {
                let t = t
                    .iter()
                    .map(|(t, s)| (t.clone(), s.iter().collect()))
                    .collect();
                (*b, t)
            })
            .collect();
        assert_eq!(sets, full.held, "seed {seed}");
        let mut expected = full.clone();
        for b in &mut expected.brokers {
            b.median_idle_ms = None;
        }
        expected.held = BTreeMap::new();
        let mut got = lean.clone();
        got.held_sets = BTreeMap::new();
        assert_eq!(got, expected, "seed {seed}");
        assert!(
            full.brokers
                .iter()
                .any(|b| b.past_expiration > 0 && b.expiring_within_hour > 0),
            "the seed reaches both boundaries"
        );
        assert!(full.topics.iter().any(|t| t.near_exhaustion > 0));
    }
}
