//! A whole-cluster lag read in waves of topics
//! ([`kdp_domain::lag::waves`]): what `kdp lag` (every format) and
//! the exporter's lag series hold at once follows one wave, not the
//! cluster. Every group is listed and described once; its committed
//! offsets are asked once to plan the waves (kept as the topics they lie
//! on) and again in each wave reading one of those topics, kept for that
//! wave's topics only. A partition is in one wave, so it is read once, and
//! its groups' offsets are the ones its count was asked from. A cluster
//! whose offsets fit in one wave is read with the first pass's offsets,
//! asked once, as a one-shot read is.

use std::collections::BTreeMap;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::groups::offsets::committed_offsets_at;
use kdp_domain::groups::offsets::GroupOffsets;
use kdp_domain::groups::read::{GroupAnswer, GroupsRead};
use kdp_domain::groups::state::GroupType;
use kdp_domain::key_error::KeyError;
use kdp_domain::lag::{Known, TopicWaves, WavePlan};
use kdp_wire::ErrorCode;

use crate::groups::{read_with, Offsets, ReadOptions};
use crate::lag::{read_scoped, LagRead, LagReadOptions};

/// Reads the lag `opts` asks for in waves of topics
/// ([`LagReadOptions::committed_per_wave`] committed offsets each) and
/// hands each wave's read to `each` as soon as it is made, in order, to be
/// judged ([`kdp_domain::lag::lag_each`]) and dropped: [`FirstPass::read`]
/// then [`FirstPass::read_waves`]. `Err` only when the groups cannot be
/// listed; else the number of waves.
pub async fn read_in_waves(
    client: &SharedClient,
    opts: &LagReadOptions,
    driver: &DriverOptions,
    bound: &TimeBound,
    known: Option<&mut Known>,
    each: impl FnMut(LagRead),
) -> Result<usize> {
    let first = FirstPass::read(client, opts, driver, bound, |_| false).await?;
    Ok(first
        .read_waves(client, opts, driver, bound, known, each)
        .await)
}

/// The groups listed and described once, with the topics each commits on
/// cut into waves: what the waves start from.
#[derive(Debug)]
pub struct FirstPass {
    /// The groups' heads; their offsets kept only on the topics asked to
    /// be kept (see [`FirstPass::read`]).
    groups: GroupsRead,
    plan: WavePlan,
    /// Each group committing on a topic asked for: the waves reading it.
    waves_of: BTreeMap<String, Vec<u32>>,
    /// With one wave, the offsets the first pass read of the topics asked
    /// for (at most a wave's): that wave needs no second OffsetFetch.
    whole: Option<BTreeMap<String, GroupOffsets>>,
    coordinators: BTreeMap<String, i32>,
}

impl FirstPass {
    /// Lists and describes the groups `opts` asks for and reads their
    /// committed offsets [`LagReadOptions::groups_per_wave`] groups at a
    /// time, keeping of each group the topics it commits on (those `opts`
    /// asks for) and its offsets on the topics `keep` accepts (the
    /// exporter's group series keep the pinned partitions' topics): a
    /// group whose offsets all lie elsewhere keeps its first one, so its
    /// answer still says it committed (a group gone with nothing committed
    /// is told apart by that). `Err` only when the groups cannot
    /// be listed.
    pub async fn read(
        client: &SharedClient,
        opts: &LagReadOptions,
        driver: &DriverOptions,
        bound: &TimeBound,
        keep: impl Fn(&str) -> bool + Send + Sync,
    ) -> Result<FirstPass> {
        let read = ReadOptions {
            only: opts.lag.groups.clone(),
            members: opts.members,
        };
        let wanted = |topic: &str| opts.lag.wants_topic(topic);
        let mut topics = TopicWaves::new();
        let mut ids_of: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        // while they fit in one wave, the offsets are kept whole too: a
        // cluster that is one wave is then read with them, asked once
        let per_wave = opts.committed_per_wave;
        let mut whole: Option<BTreeMap<String, GroupOffsets>> = Some(BTreeMap::new());
        let mut held = 0usize;
        let mut seen = |group: &str, offsets: &mut GroupOffsets| {
            let ids: Vec<u32> = offsets
                .topics()
                .filter(|(topic, _)| wanted(topic))
                .map(|(topic, n)| topics.add(topic, n))
                .collect();
            if !ids.is_empty() {
                ids_of.insert(group.to_string(), ids);
                if let Some(w) = &mut whole {
                    let mut mine = offsets.clone();
                    mine.retain_topics(&wanted);
                    held = held.saturating_add(mine.len());
                    w.insert(group.to_string(), mine);
                }
                if per_wave > 0 && held > per_wave {
                    // more than a wave: asked again, wave by wave
                    whole = None;
                }
            }
            if offsets.topics().any(|(t, _)| keep(t)) {
                offsets.retain_topics(&keep);
            } else {
                offsets.keep_first();
            }
        };
        let how = Offsets::Seen {
            per_wave: opts.groups_per_wave,
            seen: &mut seen,
        };
        let (groups, _, coordinators) = read_with(client, &read, false, how, driver, bound).await?;
        let plan = topics.plan(opts.committed_per_wave);
        let waves_of = ids_of
            .into_iter()
            .map(|(group, ids)| (group, plan.waves_of(&ids)))
            .collect();
        Ok(FirstPass {
            groups,
            whole: whole.filter(|_| plan.len() == 1),
            plan,
            waves_of,
            coordinators,
        })
    }

    /// The groups as read: each with its state, type and members, its
    /// offsets on the topics kept (see [`FirstPass::read`]) or their
    /// error; the listing's failures and visibility.
    pub fn groups(&self) -> &GroupsRead {
        &self.groups
    }

    /// Reads the waves and hands each to `each` as soon as it is made, in
    /// order. The rows of the waves together are those of
    /// [`crate::lag::read`]'s one read, wave by wave (by group, then topic
    /// and partition, within each); the gaps of the waves together are its
    /// gaps, some more than once ([`kdp_domain::lag::WaveGaps`] keeps each
    /// once). The first wave also judges the groups no wave reads (no
    /// committed offset on a topic asked for, their offsets' error, share
    /// groups, whose start offsets are read there whole) and carries the
    /// listing's gaps. `known`: as for [`crate::lag::gather_from`]; it
    /// keeps the partitions of the topics read. Returns the number of
    /// waves.
    pub async fn read_waves(
        self,
        client: &SharedClient,
        opts: &LagReadOptions,
        driver: &DriverOptions,
        bound: &TimeBound,
        mut known: Option<&mut Known>,
        mut each: impl FnMut(LagRead),
    ) -> usize {
        let FirstPass {
            groups,
            plan,
            waves_of,
            mut whole,
            coordinators,
        } = self;
        let GroupsRead {
            answers: heads,
            listing_failures,
            visibility,
            ..
        } = groups;
        let mut listing = Some((listing_failures, visibility));
        for w in 0..plan.len() {
            let Some(scope) = plan.topics(w) else { break };
            let wave = u32::try_from(w).unwrap_or(u32::MAX);
            let reads_here = |g: &GroupAnswer| {
                g.group_type != Some(GroupType::Share)
                    && waves_of
                        .get(&g.group_id)
                        .is_some_and(|ws| ws.binary_search(&wave).is_ok())
            };
            // judged in the first wave: what no wave reads
            let first_only = |g: &GroupAnswer| {
                g.group_type == Some(GroupType::Share) || !waves_of.contains_key(&g.group_id)
            };
            let asked: Vec<String> = heads
                .iter()
                .filter(|g| reads_here(g))
                .map(|g| g.group_id.clone())
                .collect();
            // one wave: its offsets were read by the first pass, and are
            // not asked again
            let (mut offsets, again): (BTreeMap<_, _>, &[String]) = match whole.take() {
                Some(whole) => (whole.into_iter().map(|(g, o)| (g, Ok(o))).collect(), &[]),
                None => (BTreeMap::new(), &asked),
            };
            for groups in again.chunks(opts.groups_per_wave.max(1)) {
                let answers =
                    committed_offsets_at(client, groups.to_vec(), &coordinators, driver, bound)
                        .await;
                match answers {
                    Ok(answers) => {
                        for (group, mut answer) in answers {
                            if let Ok(o) = &mut answer {
                                o.retain_topics(|t| scope.contains(t));
                            }
                            offsets.insert(group, answer);
                        }
                    }
                    Err(e) => {
                        for group in groups {
                            offsets.insert(group.clone(), Err(e.key_error()));
                        }
                    }
                }
            }
            drop(asked);
            let answers: Vec<GroupAnswer> = heads
                .iter()
                .filter(|g| reads_here(g) || (w == 0 && first_only(g)))
                .map(|g| {
                    let mut answer = g.clone();
                    if reads_here(g) {
                        answer.offsets = offsets.remove(&g.group_id).unwrap_or_else(|| {
                            Err(KeyError::client(
                                ErrorCode::UNKNOWN_SERVER_ERROR,
                                "no OffsetFetch answer",
                            ))
                        });
                    }
                    answer
                })
                .collect();
            // the listing's gaps once, in the first wave
            let (listing_failures, visibility) = listing.take().unwrap_or_default();
            let groups = GroupsRead {
                answers,
                listing_failures,
                visibility,
                shares: BTreeMap::new(),
            };
            let read = read_scoped(
                client,
                groups,
                opts,
                driver,
                bound,
                known.as_deref_mut(),
                Some(scope),
            )
            .await;
            each(read);
        }
        if let Some(known) = known {
            // the partitions of topics no wave read now
            known.retain(|tp| {
                (0..plan.len()).any(|w| plan.topics(w).is_some_and(|s| s.contains(&tp.0)))
            });
        }
        plan.len()
    }
}
