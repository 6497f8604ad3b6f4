//! Per application: its instances, ids, open transactions, orphaned and
//! lingering ones, the groups they hold back, how fast it makes new ids,
//! and (Flink) two jobs writing one prefix.

use std::collections::{BTreeMap, BTreeSet};

use crate::owners::attribute::{Framework, Owner, Task};
use crate::owners::collide::{collision, Collision, Started};
use crate::owners::input::{GroupSeen, OwnersInput};
use crate::owners::members::streams_process_id;
use crate::owners::verdict::Verdict;

/// One application's summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    /// Its framework.
    pub framework: Framework,
    /// Its name (see [`crate::owners::Attribution::application`]).
    pub application: String,
    /// Live instances: Streams' process ids and Connect's workers among
    /// the group's members, Flink's subtasks with a live id; `None` when
    /// the group could not be read.
    pub live_instances: Option<usize>,
    /// Its ids.
    pub ids: usize,
    /// Its open transactions.
    pub open: usize,
    /// Open and orphaned.
    pub orphaned: usize,
    /// Open and lingering.
    pub lingering: usize,
    /// Open and unknown.
    pub unknown: usize,
    /// Ids started per hour over the span of their start times (at least
    /// two known, a span above zero): Flink's one id per checkpoint, two
    /// jobs on one prefix, Streams instances that restart without state.
    /// A floor: ids whose current transaction started later are counted
    /// at that later time.
    pub churn_per_hour: Option<f64>,
    /// The oldest open orphaned or lingering transaction's age.
    pub oldest_stuck_ms: Option<i64>,
    /// The oldest open orphaned transaction's age.
    pub oldest_orphaned_ms: Option<i64>,
    /// The consumer groups its open transactions hold back, by group id;
    /// `None` when kdp could not tell for one of them.
    pub groups_blocked: Option<Vec<String>>,
    /// Flink: each subtask two jobs write (by subtask), with the evidence.
    pub collisions: Vec<(u32, Collision)>,
}

/// The subtasks of a Flink application two jobs write.
fn collisions(owners: &[&Owner]) -> Vec<(u32, Collision)> {
    let mut by: BTreeMap<u32, Vec<Started<'_>>> = BTreeMap::new();
    for o in owners {
        let Some(Task::FlinkCheckpoint { subtask, counter }) =
            o.attribution.as_ref().map(|a| &a.task)
        else {
            continue;
        };
        let Some(t) = o.txn.as_ref().ok() else {
            continue;
        };
        let Some(start_ms) = t.start_ms else { continue };
        by.entry(*subtask).or_default().push(Started {
            transactional_id: &o.transactional_id,
            counter: *counter,
            start_ms,
            topics: t.open_topics(),
        });
    }
    by.into_iter()
        .filter_map(|(subtask, ids)| Some((subtask, collision(&ids)?)))
        .collect()
}

fn live_members(seen: Option<&GroupSeen>, framework: Framework) -> Option<usize> {
    let g = seen?.described.as_ref().ok()?;
    match framework {
        Framework::KafkaConnect => Some(g.members.len()),
        _ => {
            let mut processes = BTreeSet::new();
            for m in &g.members {
                processes.insert(match m.process_id {
                    Some(p) => p,
                    None => streams_process_id(&m.metadata).ok()?,
                });
            }
            Some(processes.len())
        }
    }
}

/// Each attributed application, by framework and name.
pub fn applications(input: &OwnersInput, owners: &[Owner]) -> Vec<Application> {
    let mut by: BTreeMap<(Framework, String), Vec<&Owner>> = BTreeMap::new();
    for o in owners {
        if let Some(a) = &o.attribution {
            by.entry((a.framework, a.application.clone()))
                .or_default()
                .push(o);
        }
    }
    by.into_iter()
        .map(|((framework, application), owners)| {
            let open = |v: Option<Verdict>| {
                owners
                    .iter()
                    .filter(|o| o.is_open() && v.is_none_or(|v| o.verdict == v))
                    .count()
            };
            let starts: Vec<i64> = owners
                .iter()
                .filter_map(|o| o.txn.as_ref().ok().and_then(|t| t.start_ms))
                .collect();
            let churn_per_hour = match (starts.iter().min(), starts.iter().max()) {
                (Some(lo), Some(hi)) if starts.len() >= 2 && hi > lo => {
                    Some((starts.len() - 1) as f64 * 3_600_000.0 / (hi - lo) as f64)
                }
                _ => None,
            };
            let live_instances = match framework {
                Framework::FlinkKafkaSink => Some(
                    owners
                        .iter()
                        .filter(|o| o.verdict == Verdict::Live && o.is_open())
                        .filter_map(|o| match o.attribution.as_ref().map(|a| &a.task) {
                            Some(Task::FlinkCheckpoint { subtask, .. }) => Some(*subtask),
                            _ => None,
                        })
                        .collect::<BTreeSet<_>>()
                        .len(),
                ),
                Framework::KafkaStreams => live_members(input.groups.get(&application), framework),
                Framework::KafkaConnect => {
                    let group = application.split('/').next().unwrap_or_default();
                    live_members(input.groups.get(group), framework)
                }
            };
            let oldest = |f: fn(Verdict) -> bool| {
                owners
                    .iter()
                    .filter(|o| f(o.verdict))
                    .filter_map(|o| o.open_age_ms(input.now_ms))
                    .max()
            };
            let oldest_stuck_ms = oldest(|v| matches!(v, Verdict::Orphaned | Verdict::Lingering));
            let oldest_orphaned_ms = oldest(|v| v == Verdict::Orphaned);
            let groups_blocked = owners
                .iter()
                .try_fold(BTreeSet::new(), |mut all, o| {
                    all.extend(o.groups_blocked.as_ref()?.iter().cloned());
                    Some(all)
                })
                .map(|all| all.into_iter().collect());
            let collisions = match framework {
                Framework::FlinkKafkaSink => collisions(&owners),
                Framework::KafkaStreams | Framework::KafkaConnect => Vec::new(),
            };
            Application {
                collisions,
                framework,
                live_instances,
                ids: owners.len(),
                open: open(None),
                orphaned: open(Some(Verdict::Orphaned)),
                lingering: open(Some(Verdict::Lingering)),
                unknown: open(Some(Verdict::Unknown)),
                churn_per_hour,
                oldest_stuck_ms,
                oldest_orphaned_ms,
                groups_blocked,
                application,
            }
        })
        .collect()
}
