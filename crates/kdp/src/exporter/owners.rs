//! Per application, who writes the cluster's transactional ids
//! (`--owners`: `kdp owners`' read, once per scan, beside the diagnosis):
//!
//! - `kdp_owner_open_transactions{framework,application}`;
//! - `kdp_owner_orphaned_transactions{framework,application}`: open, and
//!   its instance gone from the group;
//! - `kdp_owner_lingering_transactions{framework,application}`: open, and
//!   a later Flink checkpoint of its subtask committed;
//! - `kdp_owner_unknown_transactions{framework,application}`: open, and
//!   its owner could not be decided (a group not read, hidden, rebalancing);
//! - `kdp_owner_live_instances{framework,application}`: Streams processes,
//!   Connect workers, Flink subtasks with a live transaction; no series
//!   when the group could not be read;
//! - `kdp_owner_oldest_orphaned_seconds{framework,application}`: the age of
//!   its oldest open orphaned transaction (no series without one).
//! - `kdp_owner_colliding_subtasks{framework,application}`: Flink only, the
//!   subtasks of its prefix two jobs write (0 when none).
//!
//! A read that failed registers nothing (and makes the scan partial): no
//! zero stands for a check not made.

use kdp_domain::owners::{Framework, Owners};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type IntGauge = Gauge<i64, std::sync::atomic::AtomicI64>;
type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Registers the owner families of `judged`; nothing without it.
pub fn register(r: &mut Registry, judged: Option<&Owners>) {
    let Some(judged) = judged else { return };
    let open = Family::<Labels, IntGauge>::default();
    let orphaned = Family::<Labels, IntGauge>::default();
    let lingering = Family::<Labels, IntGauge>::default();
    let unknown = Family::<Labels, IntGauge>::default();
    let live = Family::<Labels, IntGauge>::default();
    let oldest = Family::<Labels, FloatGauge>::default();
    let colliding = Family::<Labels, IntGauge>::default();
    for a in &judged.applications {
        let labels = vec![
            ("framework", a.framework.label().to_string()),
            ("application", a.application.clone()),
        ];
        open.get_or_create(&labels).set(count(a.open));
        orphaned.get_or_create(&labels).set(count(a.orphaned));
        lingering.get_or_create(&labels).set(count(a.lingering));
        unknown.get_or_create(&labels).set(count(a.unknown));
        if let Some(n) = a.live_instances {
            live.get_or_create(&labels).set(count(n));
        }
        if let Some(ms) = a.oldest_orphaned_ms {
            oldest.get_or_create(&labels).set(ms.max(0) as f64 / 1000.0);
        }
        if a.framework == Framework::FlinkKafkaSink {
            colliding
                .get_or_create(&labels)
                .set(count(a.collisions.len()));
        }
    }
    r.register(
        "kdp_owner_open_transactions",
        "Open transactions of the application's transactional ids (kdp owners)",
        open,
    );
    r.register(
        "kdp_owner_orphaned_transactions",
        "Open transactions whose instance is gone from the application's group (kdp owners' 'orphaned'): they block read_committed consumers until their coordinator aborts them",
        orphaned,
    );
    r.register(
        "kdp_owner_lingering_transactions",
        "Open Flink transactions a later checkpoint of the same subtask committed after (kdp owners' 'lingering')",
        lingering,
    );
    r.register(
        "kdp_owner_unknown_transactions",
        "Open transactions whose owner kdp could not decide this scan (group not read, hidden by ACLs, rebalancing)",
        unknown,
    );
    r.register(
        "kdp_owner_live_instances",
        "Live instances of the application: Streams processes and Connect workers in its group, Flink subtasks with a live transaction; no series when its group could not be read",
        live,
    );
    r.register(
        "kdp_owner_oldest_orphaned_seconds",
        "Age of the application's oldest open orphaned transaction; no series without one",
        oldest,
    );
    r.register(
        "kdp_owner_colliding_subtasks",
        "Flink: subtasks of the application's transactional-id prefix two jobs write (their ids alternate between two checkpoint sequences)",
        colliding,
    );
}

#[cfg(test)]
mod tests {
    use kdp_domain::owners::collide::{Collision, Sequence};
    use kdp_domain::owners::Application;

    use super::*;
    use crate::exporter::exposition::{encode, Format};

    fn app(live: Option<usize>, oldest: Option<i64>) -> Application {
        Application {
            framework: Framework::KafkaStreams,
            application: "orders-app".into(),
            live_instances: live,
            ids: 4,
            open: 3,
            orphaned: 2,
            lingering: 0,
            unknown: 0,
            churn_per_hour: None,
            oldest_stuck_ms: oldest,
            oldest_orphaned_ms: oldest,
            groups_blocked: None,
            collisions: Vec::new(),
        }
    }

    fn text(judged: Option<&Owners>) -> String {
        let mut r = Registry::default();
        register(&mut r, judged);
        encode(&r, Format::Text).unwrap()
    }

    #[test]
    fn each_application_gets_its_series_and_nothing_stands_for_a_check_not_made() {
        let judged = Owners {
            owners: Vec::new(),
            applications: vec![app(Some(1), Some(540_000))],
            listing_complete: true,
        };
        let t = text(Some(&judged));
        let labels = r#"{framework="kafka-streams",application="orders-app"}"#;
        for line in [
            format!("kdp_owner_orphaned_transactions{labels} 2"),
            format!("kdp_owner_open_transactions{labels} 3"),
            format!("kdp_owner_live_instances{labels} 1"),
            format!("kdp_owner_oldest_orphaned_seconds{labels} 540.0"),
        ] {
            assert!(t.contains(&line), "{line} not in\n{t}");
        }
        // a group not read: no live-instances series; no orphan: no age
        let judged = Owners {
            applications: vec![app(None, None)],
            ..judged
        };
        let t = text(Some(&judged));
        assert!(!t.contains("kdp_owner_live_instances{"), "{t}");
        assert!(!t.contains("kdp_owner_oldest_orphaned_seconds{"), "{t}");
        assert!(!t.contains("kdp_owner_colliding_subtasks{"), "Streams: {t}");
        // Flink: the subtasks two jobs write, 0 included
        let seq = |first: &str, last: &str| Sequence {
            first: first.into(),
            last: last.into(),
            ids: 3,
            topics: Default::default(),
        };
        let collision = Collision {
            sequences: [seq("s-0-41", "s-0-43"), seq("s-0-1", "s-0-3")],
            switches: 5,
        };
        let flink = |collisions| Application {
            framework: Framework::FlinkKafkaSink,
            application: "s".into(),
            collisions,
            ..app(Some(1), None)
        };
        let judged = Owners {
            applications: vec![flink(vec![(0, collision)])],
            ..judged
        };
        let flink_labels = r#"{framework="flink-kafka-sink",application="s"}"#;
        let t = text(Some(&judged));
        assert!(
            t.contains(&format!("kdp_owner_colliding_subtasks{flink_labels} 1")),
            "{t}"
        );
        let judged = Owners {
            applications: vec![flink(Vec::new())],
            ..judged
        };
        let t = text(Some(&judged));
        assert!(
            t.contains(&format!("kdp_owner_colliding_subtasks{flink_labels} 0")),
            "{t}"
        );
        // a read that failed: nothing at all
        assert!(!text(None).contains("kdp_owner_"));
    }
}
