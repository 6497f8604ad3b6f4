//! The groups of a cluster as the blocked-consumer join needs them: every
//! group ListGroups names (or the ones asked for), each with its state, its
//! committed offsets and, when asked, its members (DescribeGroups or
//! ConsumerGroupDescribe). `kdp blocked`, the blocked-groups column of
//! `find-hanging` and `describe --with-transactions`, the exporter and a
//! repair's proof all read them this way, once per run.

use std::collections::BTreeMap;

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::error::Result;
use kdp_client::groups::describe::{
    describe_groups_at, describe_members_at, Description, MemberDescriptions,
};
use kdp_client::groups::list::list_groups;
use kdp_client::groups::offsets::committed_offsets_at;
use kdp_client::groups::share_offsets::share_offsets_at;
use kdp_client::txn::configs::{group_configs, SHARE_ISOLATION_LEVEL};
use kdp_domain::diagnose::blocked::{
    any_pinned, held_groups as held_groups_of, held_groups_judged as held_groups_judged_of,
    HeldGroups,
};
use kdp_domain::diagnose::Findings;
use kdp_domain::groups::offsets::GroupOffsets;
use kdp_domain::groups::read::{visibility, GroupAnswer, GroupsRead, Visibility};
use kdp_domain::groups::share::{Isolation, ShareRead};
use kdp_domain::groups::state::{GroupState, GroupType};
use kdp_domain::joined::Joined;
use kdp_domain::key_error::KeyError;
use kdp_domain::owners::GroupProtocol;
use kdp_wire::ErrorCode;

/// What to read of each group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Only these groups (empty: every group the listing names).
    pub only: Vec<String>,
    /// Also describe each group at its coordinator for its members
    /// (DescribeGroups, ConsumerGroupDescribe).
    pub members: bool,
}

/// A group id nobody uses (the `__` prefix is never a real consumer's).
pub(crate) fn probe_id() -> String {
    format!(
        "__kdp-acl-probe-{}-{}",
        crate::clock::now_ms(),
        std::process::id()
    )
}

/// What [`read_groups_keeping`] read beyond the [`GroupsRead`], kept for a
/// later read in the same run (`kdp owners`' column), which then asks none
/// of it again.
#[derive(Debug, Clone, Default)]
pub struct GroupsKept {
    /// Each listed group: what the listing's protocol type says, its type
    /// and its coordinator (the broker that listed it).
    pub listed: BTreeMap<String, (GroupProtocol, Option<GroupType>, i32)>,
    /// The brokers whose ListGroups failed.
    pub listing_failures: Vec<(i32, KeyError)>,
    /// Whether the listing may hide groups, when the read probed it.
    pub visibility: Option<Visibility>,
    /// The groups described, with their members.
    pub members: MemberDescriptions,
}

/// Lists the groups on every broker and reads the committed offsets (and,
/// with `members`, the description) of `only` (every listed group when
/// `only` is empty). The offsets and the descriptions are asked at once.
pub async fn read_groups(
    client: &SharedClient,
    read: &ReadOptions,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<GroupsRead> {
    read_with(client, read, false, Offsets::Kept, opts, bound)
        .await
        .map(|(r, _, _)| r)
}

/// [`read_groups`], keeping the listing, the probe's answer and the
/// members of the groups described ([`GroupsKept`]).
pub async fn read_groups_keeping(
    client: &SharedClient,
    read: &ReadOptions,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<(GroupsRead, GroupsKept)> {
    read_with(client, read, true, Offsets::Kept, opts, bound)
        .await
        .map(|(r, k, _)| (r, k))
}

/// How a read of the groups takes their committed offsets.
pub(crate) enum Offsets<'a> {
    /// Each group's, held in its answer.
    Kept,
    /// Asked `per_wave` groups at a time, each group's handed to `seen`,
    /// which keeps what it leaves of them (a read in waves of topics keeps
    /// few and asks them again, wave by wave).
    Seen {
        per_wave: usize,
        seen: &'a mut (dyn FnMut(&str, &mut GroupOffsets) + Send),
    },
}

/// Each group's committed offsets as `how` takes them (see [`Offsets`]).
async fn offsets_of(
    client: &SharedClient,
    groups: Vec<String>,
    coordinators: &BTreeMap<String, i32>,
    how: Offsets<'_>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<BTreeMap<String, std::result::Result<GroupOffsets, KeyError>>> {
    let (per_wave, seen) = match how {
        Offsets::Kept => {
            return committed_offsets_at(client, groups, coordinators, opts, bound).await;
        }
        Offsets::Seen { per_wave, seen } => (per_wave.max(1), seen),
    };
    let mut out = BTreeMap::new();
    for wave in groups.chunks(per_wave) {
        let answers =
            committed_offsets_at(client, wave.to_vec(), coordinators, opts, bound).await?;
        for (group, answer) in answers {
            let answer = answer.map(|mut offsets| {
                seen(&group, &mut offsets);
                offsets
            });
            out.insert(group, answer);
        }
    }
    Ok(out)
}

/// The groups as [`read_groups`] reads them, with the offsets taken as
/// `how` says, what `keep` keeps, and each group's coordinator (the
/// broker that listed it).
pub(crate) async fn read_with(
    client: &SharedClient,
    read: &ReadOptions,
    keep: bool,
    how: Offsets<'_>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<(GroupsRead, GroupsKept, BTreeMap<String, i32>)> {
    let only = &read.only;
    let listings = list_groups(client, &Default::default(), opts, bound).await?;
    let mut listed: BTreeMap<String, (Option<GroupState>, Option<GroupType>)> = BTreeMap::new();
    // the broker that lists a group coordinates it: no FindCoordinator
    let mut coordinators: BTreeMap<String, i32> = BTreeMap::new();
    let mut listing_failures = Vec::new();
    let mut kept = GroupsKept::default();
    for (broker, listing) in listings {
        match listing {
            Ok(groups) => {
                for g in groups {
                    if keep {
                        let protocol = GroupProtocol::from_names(&g.protocol_type, "");
                        kept.listed.insert(
                            g.group_id.clone(),
                            (protocol, g.group_type.clone(), g.coordinator),
                        );
                    }
                    coordinators.insert(g.group_id.clone(), g.coordinator);
                    listed.insert(g.group_id, (g.state, g.group_type));
                }
            }
            Err(e) => listing_failures.push((broker, e)),
        }
    }
    let probe = only.is_empty().then(probe_id);
    let mut wanted: Vec<String> = if only.is_empty() {
        listed.keys().cloned().collect()
    } else {
        only.to_vec()
    };
    let typed: Vec<(String, Option<GroupType>)> = if read.members {
        wanted
            .iter()
            .map(|g| (g.clone(), listed.get(g).and_then(|l| l.1.clone())))
            .collect()
    } else {
        Vec::new()
    };
    // kept: described with their members, counted here
    let described = async {
        if !keep {
            return describe_groups_at(client, &typed, &coordinators, opts, bound)
                .await
                .map(|d| (d, BTreeMap::new()));
        }
        let members = describe_members_at(client, &typed, &coordinators, opts, bound).await?;
        let counted = members
            .iter()
            .map(|(g, d)| {
                let d = d.as_ref().map(Description::from).map_err(Clone::clone);
                (g.clone(), d)
            })
            .collect();
        Ok((counted, members))
    };
    wanted.extend(probe.clone());
    let (offsets, described) = tokio::join!(
        offsets_of(client, wanted, &coordinators, how, opts, bound),
        described
    );
    let (mut offsets, (mut described, members)) = (offsets?, described?);
    let visibility = match &probe {
        Some(id) => visibility(offsets.remove(id)),
        None => Visibility::Named,
    };
    if keep {
        kept.listing_failures = listing_failures.clone();
        kept.visibility = probe.is_some().then(|| visibility.clone());
        kept.members = members;
    }
    let answers = offsets
        .into_iter()
        .map(|(group, offsets)| {
            let (state, group_type) = listed.remove(&group).unwrap_or_default();
            let description = described.remove(&group);
            GroupAnswer {
                state: match &description {
                    Some(Ok(d)) => Some(d.state.clone()),
                    _ => state,
                },
                group_type: match &description {
                    Some(Ok(d)) => Some(d.group_type.clone()),
                    _ => group_type,
                },
                members: description.map(|d| d.map(|d| d.members)),
                group_id: group,
                offsets,
            }
        })
        .collect();
    let read = GroupsRead {
        answers,
        listing_failures,
        visibility,
        shares: BTreeMap::new(),
    };
    Ok((read, kept, coordinators))
}

/// Reads into `read` the start offsets and `share.isolation.level` of
/// each share group it holds and has not read them for (`kdp lag`, the
/// exporter's lag series): both asked at once; a group missing from
/// either answer has that part's error (never a default taken for an
/// answer).
pub async fn read_shares(
    client: &SharedClient,
    read: &mut GroupsRead,
    opts: &DriverOptions,
    bound: &TimeBound,
) {
    let groups: Vec<String> = read
        .answers
        .iter()
        .filter(|g| {
            g.group_type == Some(GroupType::Share) && !read.shares.contains_key(&g.group_id)
        })
        .map(|g| g.group_id.clone())
        .collect();
    if groups.is_empty() {
        return;
    }
    let coordinators = BTreeMap::new();
    let (mut offsets, configs) = tokio::join!(
        share_offsets_at(client, groups.clone(), &coordinators, opts, bound),
        group_configs(
            client,
            groups.clone(),
            &[SHARE_ISOLATION_LEVEL],
            opts,
            bound
        )
    );
    let missing = |what: &str| KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, what.to_string());
    let mut configs = match configs {
        Ok(c) => c,
        Err(e) => {
            let e = KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, e.to_string());
            groups.iter().map(|g| (g.clone(), Err(e.clone()))).collect()
        }
    };
    read.shares.extend(groups.into_iter().map(|g| {
        let isolation = match configs.remove(&g) {
            Some(Ok(c)) => {
                let value = c.get(SHARE_ISOLATION_LEVEL).cloned().flatten();
                Isolation::of_config(value.as_deref()).ok_or_else(|| {
                    KeyError::client(
                        ErrorCode::INVALID_CONFIG,
                        format!("share.isolation.level {value:?} is not a level Kafka knows"),
                    )
                })
            }
            Some(Err(e)) => Err(e),
            None => Err(missing("no DescribeConfigs answer")),
        };
        let share = ShareRead {
            offsets: offsets
                .remove(&g)
                .unwrap_or_else(|| Err(missing("no DescribeShareGroupOffsets answer"))),
            isolation,
        };
        (g, share)
    }));
}

/// The blocked-groups column of `find-hanging` and `describe
/// --with-transactions`: the groups the join's open transactions hold at
/// the LSO, and the read they came from.
#[derive(Debug, Clone)]
pub struct Held {
    /// Each holder's groups; a holder kdp could not check is unknown.
    pub groups: HeldGroups,
    /// The read of the groups: `None` when nothing was pinned (no need to
    /// read them), else the groups or why they could not be read.
    pub read: Option<Result<GroupsRead>>,
}

/// The groups every open transaction of `joined` holds at the LSO, read
/// once, and only when a partition is pinned ([`any_pinned`]); judged as
/// `find-hanging` judges candidates (`max_timeout_ms`).
pub async fn held_groups(
    client: &SharedClient,
    joined: &Joined,
    max_timeout_ms: i64,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Held {
    held(
        client,
        joined,
        Judgement::Threshold(max_timeout_ms),
        false,
        opts,
        bound,
    )
    .await
    .0
}

/// [`held_groups`], keeping what the groups' read holds beyond them
/// ([`GroupsKept`]; `None` when the groups were not read, or failed).
pub async fn held_groups_keeping(
    client: &SharedClient,
    joined: &Joined,
    max_timeout_ms: i64,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> (Held, Option<GroupsKept>) {
    held(
        client,
        joined,
        Judgement::Threshold(max_timeout_ms),
        true,
        opts,
        bound,
    )
    .await
}

/// [`held_groups_keeping`] from the judgement of `joined` the caller
/// already made (`find-hanging` lists the same [`Findings`]), so it is made
/// once; candidates are those of `judged`'s threshold.
pub async fn held_groups_judged(
    client: &SharedClient,
    joined: &Joined,
    judged: &Findings,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> (Held, Option<GroupsKept>) {
    held(client, joined, Judgement::Made(judged), true, opts, bound).await
}

/// The judgement the held groups are read against: made by the caller, or
/// to make once the groups are read.
#[derive(Clone, Copy)]
enum Judgement<'a> {
    Made(&'a Findings),
    Threshold(i64),
}

async fn held(
    client: &SharedClient,
    joined: &Joined,
    judgement: Judgement<'_>,
    keep: bool,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> (Held, Option<GroupsKept>) {
    let of = |read: Option<&GroupsRead>| match judgement {
        Judgement::Made(judged) => held_groups_judged_of(joined, judged, read),
        Judgement::Threshold(ms) => held_groups_of(joined, read, ms),
    };
    if !any_pinned(joined) {
        let held = Held {
            groups: of(None),
            read: None,
        };
        return (held, None);
    }
    let read_all = ReadOptions::default();
    let (read, kept) = match read_with(client, &read_all, keep, Offsets::Kept, opts, bound).await {
        Ok((r, k, _)) => (Ok(r), keep.then_some(k)),
        Err(e) => (Err(e), None),
    };
    let held = Held {
        groups: of(read.as_ref().ok()),
        read: Some(read),
    };
    (held, kept)
}
