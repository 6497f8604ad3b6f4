//! Per-producer flags for `describe --with-transactions`: what the joined
//! state of a partition's producer and its coordinator proves, and nothing
//! more. A healthy producer is never flagged.
//!
//! - `fenced`: the [fence verdict](super::fence) proves that a later
//!   instance (or the coordinator) fenced the partition's last writes: the
//!   transaction log shows an InitProducerId or a coordinator's abort after
//!   them (both protocol generations), or, under transaction protocol v1
//!   only, the partition's epoch is older than the coordinator's. Under v2
//!   every transaction end bumps the epoch, so a healthy producer that wrote
//!   p0 in one transaction and p1 in the next leaves an older epoch on p0:
//!   the epochs alone tell nothing there, and without the log kdp does not
//!   flag it.
//! - `open-too-long`: an open transaction older than its timeout (the
//!   coordinator's for the id, else the cluster's maximum).
//! - `orphan`: an open transaction the coordinator will not end: no
//!   coordinator knows the producer, or its transaction does not include
//!   this partition while the coordinator has moved to another epoch or
//!   producer id.
//! - `idle`: silent for longer than the cluster's `producer.id.expiration.ms`.

use kdp_wire::messages::{ProducerState, TransactionState};

use crate::coordinator::includes;
use crate::diagnose::fence::FenceVerdict;
use crate::protocol::TxnProtocol;
use crate::severity::Severity;

/// One flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flag {
    /// See the module docs.
    Fenced,
    /// See the module docs.
    OpenTooLong,
    /// See the module docs.
    Orphan,
    /// See the module docs.
    Idle,
}

impl Flag {
    /// The flag as printed.
    pub fn label(self) -> &'static str {
        match self {
            Flag::Fenced => "fenced",
            Flag::OpenTooLong => "open-too-long",
            Flag::Orphan => "orphan",
            Flag::Idle => "idle",
        }
    }

    /// Fenced and orphaned producers need action (their writes are dead,
    /// or their transaction pins the LSO for good); the others are worth a
    /// look.
    pub fn severity(self) -> Severity {
        match self {
            Flag::Fenced | Flag::Orphan => Severity::Problem,
            Flag::OpenTooLong | Flag::Idle => Severity::Warning,
        }
    }
}

/// What the coordinators say about a producer id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coordinator<'a> {
    /// Listed under a transactional id and described.
    Known(&'a TransactionState),
    /// Listed, but the coordinator no longer knows the id, or no
    /// coordinator lists the producer id although the caller may describe
    /// any id and every broker answered.
    Unknown,
    /// kdp cannot tell (hidden by ACLs, a broker did not answer, not a
    /// transactional producer that any listing could show).
    Unseen,
}

/// The cluster facts the flags depend on.
#[derive(Debug, Clone, Copy)]
pub struct Context {
    /// Now, in ms since the epoch.
    pub now_ms: i64,
    /// The transaction protocol the cluster runs.
    pub protocol: TxnProtocol,
    /// The cluster's `transaction.max.timeout.ms`.
    pub max_transaction_timeout_ms: i64,
    /// The cluster's `producer.id.expiration.ms`, if known.
    pub producer_id_expiration_ms: Option<i64>,
}

/// The flags of producer `p` on `topic`/`partition`, ascending; `fence` is
/// its [fence verdict](super::fence::verdict).
pub fn flags(
    p: &ProducerState,
    topic: &str,
    partition: i32,
    coordinator: &Coordinator<'_>,
    cx: &Context,
    fence: &FenceVerdict,
) -> Vec<Flag> {
    let mut out = Vec::new();
    let open = p.current_txn_start_offset >= 0;
    let known = match coordinator {
        Coordinator::Known(t) => Some(*t),
        _ => None,
    };
    let epoch_moved = known.is_some_and(|t| i32::from(t.producer_epoch) > p.producer_epoch);
    let tracked_here = known.is_some_and(|t| includes(t, topic, partition));

    if fence.is_fenced() {
        out.push(Flag::Fenced);
    }
    if open {
        let (start, timeout) = match known {
            Some(t) if tracked_here && t.transaction_start_time_ms >= 0 => (
                t.transaction_start_time_ms,
                i64::from(t.transaction_timeout_ms),
            ),
            Some(t) => (p.last_timestamp, i64::from(t.transaction_timeout_ms)),
            None => (p.last_timestamp, cx.max_transaction_timeout_ms),
        };
        if cx.now_ms.saturating_sub(start) > timeout {
            out.push(Flag::OpenTooLong);
        }
        let orphan = match coordinator {
            Coordinator::Unknown => true,
            Coordinator::Known(t) => {
                !tracked_here && (t.producer_id != p.producer_id || epoch_moved)
            }
            Coordinator::Unseen => false,
        };
        if orphan {
            out.push(Flag::Orphan);
        }
    }
    if let Some(expiration) = cx.producer_id_expiration_ms {
        if p.last_timestamp >= 0 && cx.now_ms.saturating_sub(p.last_timestamp) > expiration {
            out.push(Flag::Idle);
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::fence::{verdict, LogView};
    use kdp_wire::messages::TopicData;

    /// The flags with the verdict of the epochs alone (no log read).
    fn flags(
        p: &ProducerState,
        topic: &str,
        partition: i32,
        coordinator: &Coordinator<'_>,
        cx: &Context,
    ) -> Vec<Flag> {
        let t = match coordinator {
            Coordinator::Known(t) => Some(*t),
            _ => None,
        };
        let v = verdict(p, t, cx.protocol, LogView::NotRead);
        super::flags(p, topic, partition, coordinator, cx, &v)
    }

    const NOW: i64 = 100_000_000;

    fn cx(protocol: TxnProtocol) -> Context {
        Context {
            now_ms: NOW,
            protocol,
            max_transaction_timeout_ms: 900_000,
            producer_id_expiration_ms: Some(86_400_000),
        }
    }

    fn producer(epoch: i32, open: bool, idle_ms: i64) -> ProducerState {
        ProducerState {
            producer_id: 7,
            producer_epoch: epoch,
            last_sequence: 4,
            last_timestamp: NOW - idle_ms,
            coordinator_epoch: 1,
            current_txn_start_offset: if open { 10 } else { -1 },
            ..Default::default()
        }
    }

    fn coordinator(epoch: i16, state: &str, partitions: &[(&str, i32)]) -> TransactionState {
        TransactionState {
            transactional_id: "tx".into(),
            transaction_state: state.into(),
            transaction_timeout_ms: 60_000,
            transaction_start_time_ms: NOW - 1_000,
            producer_id: 7,
            producer_epoch: epoch,
            topics: partitions
                .iter()
                .map(|(t, p)| TopicData {
                    topic: (*t).into(),
                    partitions: vec![*p],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn healthy_producers_are_never_flagged() {
        // v1: committed, same epoch as the coordinator.
        let t = coordinator(3, "CompleteCommit", &[]);
        let f = flags(
            &producer(3, false, 1_000),
            "a",
            0,
            &Coordinator::Known(&t),
            &cx(TxnProtocol::V1),
        );
        assert!(f.is_empty(), "{f:?}");
        // v2: committed p0 in one transaction and p1 in the next: p0 keeps
        // an older epoch, which proves nothing under v2.
        let t = coordinator(5, "CompleteCommit", &[]);
        let f = flags(
            &producer(4, false, 1_000),
            "a",
            0,
            &Coordinator::Known(&t),
            &cx(TxnProtocol::V2),
        );
        assert!(f.is_empty(), "{f:?}");
        // An open transaction the coordinator tracks, within its timeout.
        let t = coordinator(3, "Ongoing", &[("a", 0)]);
        let f = flags(
            &producer(3, true, 100),
            "a",
            0,
            &Coordinator::Known(&t),
            &cx(TxnProtocol::V2),
        );
        assert!(f.is_empty(), "{f:?}");
        // An idempotent producer no coordinator lists.
        let f = flags(
            &producer(0, false, 100),
            "a",
            0,
            &Coordinator::Unseen,
            &cx(TxnProtocol::V1),
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn older_epoch_is_fenced_under_v1_only() {
        let t = coordinator(4, "CompleteCommit", &[]);
        let p = producer(3, false, 1_000);
        let v1 = flags(&p, "a", 0, &Coordinator::Known(&t), &cx(TxnProtocol::V1));
        assert_eq!(v1, vec![Flag::Fenced]);
        let v2 = flags(&p, "a", 0, &Coordinator::Known(&t), &cx(TxnProtocol::V2));
        assert!(v2.is_empty(), "{v2:?}");
    }

    #[test]
    fn open_transactions_left_behind_are_orphans() {
        // The coordinator moved on (another epoch, this partition not in its
        // transaction): on both generations.
        let t = coordinator(5, "Ongoing", &[("b", 0)]);
        for proto in [TxnProtocol::V1, TxnProtocol::V2] {
            let f = flags(
                &producer(3, true, 1_000),
                "a",
                0,
                &Coordinator::Known(&t),
                &cx(proto),
            );
            assert_eq!(f, vec![Flag::Orphan], "{proto:?}");
        }
        // No coordinator knows the producer.
        let f = flags(
            &producer(3, true, 1_000),
            "a",
            0,
            &Coordinator::Unknown,
            &cx(TxnProtocol::V1),
        );
        assert_eq!(f, vec![Flag::Orphan]);
        // Hidden from the caller: not proven.
        let f = flags(
            &producer(3, true, 1_000),
            "a",
            0,
            &Coordinator::Unseen,
            &cx(TxnProtocol::V1),
        );
        assert!(f.is_empty(), "{f:?}");
    }

    #[test]
    fn open_too_long_uses_the_coordinators_timeout() {
        let mut t = coordinator(3, "Ongoing", &[("a", 0)]);
        t.transaction_start_time_ms = NOW - 61_000;
        let f = flags(
            &producer(3, true, 10),
            "a",
            0,
            &Coordinator::Known(&t),
            &cx(TxnProtocol::V2),
        );
        assert_eq!(f, vec![Flag::OpenTooLong]);
        // Unknown to coordinators: the cluster's maximum applies.
        let f = flags(
            &producer(3, true, 900_001),
            "a",
            0,
            &Coordinator::Unseen,
            &cx(TxnProtocol::V2),
        );
        assert_eq!(f, vec![Flag::OpenTooLong]);
    }

    #[test]
    fn idle_past_the_expiration() {
        let f = flags(
            &producer(0, false, 86_400_001),
            "a",
            0,
            &Coordinator::Unseen,
            &cx(TxnProtocol::V1),
        );
        assert_eq!(f, vec![Flag::Idle]);
        let no_config = Context {
            producer_id_expiration_ms: None,
            ..cx(TxnProtocol::V1)
        };
        let f = flags(
            &producer(0, false, 86_400_001),
            "a",
            0,
            &Coordinator::Unseen,
            &no_config,
        );
        assert!(f.is_empty());
    }
}
