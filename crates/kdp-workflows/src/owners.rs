//! `kdp owners`' read: every broker's transactions (ListTransactions), the
//! ids in scope and their siblings described (DescribeTransactions), and
//! the groups that can own them with their members (ListGroups, then
//! DescribeGroups / ConsumerGroupDescribe / StreamsGroupDescribe at their
//! coordinators), all under one [`TimeBound`]. kdp-domain's
//! [`Owners::judge`] decides.
//!
//! [`read_owners_and_groups`] also reads what `kdp blocked` reads over the
//! partitions the open transactions pin, so each open transaction's
//! blocked groups come from the one model that judges them.
//!
//! A group of a type kdp does not describe (share groups, a type newer
//! than kdp), or a streams group on a broker without StreamsGroupDescribe,
//! stays unread: its ids are judged unknown, never guessed.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use kdp_client::admin::DriverOptions;
use kdp_client::bound::TimeBound;
use kdp_client::client::SharedClient;
use kdp_client::describe::{DescribeOptions, TopicSelection};
use kdp_client::error::Result;
use kdp_client::groups::describe::describe_members_at;
use kdp_client::groups::list::list_groups;
use kdp_client::groups::offsets::committed_offsets_at;
use kdp_client::txn::describe::describe_transactions;
use kdp_client::txn::list::list_transactions;
use kdp_domain::diagnose::blocked::{held_groups, HeldGroups};
use kdp_domain::groups::read::{visibility, GroupsRead, Visibility};
use kdp_domain::groups::state::GroupType;
use kdp_domain::key_error::KeyError;
use kdp_domain::owners::scheme;
use kdp_domain::owners::{GroupProtocol, GroupSeen, Owners, OwnersInput, TxnEntry};
use kdp_wire::ErrorCode;

use crate::blocked::gather;
use crate::groups::ReadOptions;
use crate::join::JoinOptions;
use crate::prior::Prior;

/// Which ids to judge (all empty: every id the cluster lists).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// These ids, listed or not.
    pub transactional_ids: Vec<String>,
    /// The ids a group's application writes: `<group>-…` (Streams, Connect
    /// tasks) and `connect-cluster-<group>`.
    pub groups: Vec<String>,
    /// Ids that start with one of these.
    pub prefixes: Vec<String>,
}

impl Scope {
    fn everything(&self) -> bool {
        self.transactional_ids.is_empty() && self.groups.is_empty() && self.prefixes.is_empty()
    }

    /// Whether `id` is one the caller asked about.
    pub fn contains(&self, id: &str) -> bool {
        self.everything()
            || self.transactional_ids.iter().any(|t| t == id)
            || self.matches_pattern(id)
    }

    /// [`Scope::contains`] for many ids: the named ids in a set, as a scope
    /// may name thousands (every id `kdp blocked` shows) and be matched
    /// against every listed id.
    fn matcher(&self) -> impl Fn(&str) -> bool + '_ {
        let ids: HashSet<&str> = self.transactional_ids.iter().map(String::as_str).collect();
        let everything = self.everything();
        move |id| everything || ids.contains(id) || self.matches_pattern(id)
    }

    /// Whether `id` is one of a prefix or a group the caller asked about.
    fn matches_pattern(&self, id: &str) -> bool {
        self.prefixes.iter().any(|p| id.starts_with(p.as_str()))
            || self.groups.iter().any(|g| {
                id.strip_prefix(g.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
                    || id.strip_prefix("connect-cluster-") == Some(g.as_str())
            })
    }
}

/// The stem a Flink id shares with its siblings: everything before the
/// counter.
fn stem(id: &str) -> Option<&str> {
    id.rsplit_once('-').map(|(s, _)| s)
}

/// What one run read and judged.
#[derive(Debug, Clone)]
pub struct OwnersRead {
    /// The read, as the domain judges it (also the siblings outside the
    /// scope).
    pub input: OwnersInput,
    /// The judgement, restricted to the scope.
    pub judged: Owners,
    /// Brokers whose ListTransactions failed.
    pub listing_failures: Vec<(i32, KeyError)>,
    /// [`read_owners_and_groups`]: the read behind the groups blocked
    /// (`None`: not asked for, or nothing open to read them for).
    pub held: Option<HeldRead>,
}

/// Why the groups the open transactions hold back were not read in full.
#[derive(Debug, Clone)]
pub enum HeldRead {
    /// Read: `kdp blocked`'s view of the partitions the open transactions
    /// pin (`Err`: the groups could not be listed).
    Read(std::result::Result<GroupsRead, String>),
    /// The join over those partitions failed.
    JoinFailed(String),
}

/// Reads and judges the owners of the ids in `scope`.
pub async fn read_owners(
    client: &SharedClient,
    scope: &Scope,
    now_ms: i64,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<OwnersRead> {
    read_owners_after(client, scope, now_ms, Prior::default(), opts, bound).await
}

/// [`read_owners`] after another read of the same run (`prior`): what it
/// holds is taken as it is, and only the rest is asked (the siblings it did
/// not describe, the groups it did not describe, the listings or the probe
/// it did not make).
pub async fn read_owners_after(
    client: &SharedClient,
    scope: &Scope,
    now_ms: i64,
    prior: Prior,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<OwnersRead> {
    let (input, listing_failures) = read_input(client, scope, now_ms, prior, opts, bound).await?;
    Ok(judge(input, scope, listing_failures, None))
}

/// [`read_owners`], and the consumer groups each open transaction in
/// `scope` holds back: `kdp blocked`'s join and groups read over the
/// partitions those transactions pin, judged by its model
/// ([`held_groups`]), after the owners' own read.
pub async fn read_owners_and_groups(
    client: &SharedClient,
    scope: &Scope,
    now_ms: i64,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<OwnersRead> {
    let (mut input, listing_failures) =
        read_input(client, scope, now_ms, Prior::default(), opts, bound).await?;
    // the partitions the open transactions in scope pin
    let in_scope = scope.matcher();
    let pinned: Vec<(String, i32)> = input
        .transactions
        .iter()
        .filter(|t| in_scope(&t.transactional_id))
        .flat_map(|t| t.pinned())
        .collect();
    if pinned.is_empty() {
        // nothing open: nothing held back
        input.held = Some(HeldGroups::default());
        return Ok(judge(input, scope, listing_failures, None));
    }
    let describe = DescribeOptions {
        topics: Some(TopicSelection::of_partitions(pinned)),
        max_partitions_per_request: opts.max_keys_per_request,
        max_concurrent_brokers: opts.max_concurrent_brokers,
        ..DescribeOptions::default()
    };
    let gathered = gather(
        client,
        &JoinOptions::new(describe, true),
        &ReadOptions::default(),
        opts,
        bound,
    )
    .await;
    let held = match gathered.joined {
        Ok(joined) => {
            let groups = gathered.groups.map_err(|e| e.to_string());
            input.held = Some(held_groups(
                &joined,
                groups.as_ref().ok(),
                joined.max_timeout_ms(),
            ));
            HeldRead::Read(groups)
        }
        Err(e) => HeldRead::JoinFailed(e.to_string()),
    };
    Ok(judge(input, scope, listing_failures, Some(held)))
}

/// The judgement of `input`, restricted to `scope`.
fn judge(
    input: OwnersInput,
    scope: &Scope,
    listing_failures: Vec<(i32, KeyError)>,
    held: Option<HeldRead>,
) -> OwnersRead {
    let mut judged = Owners::judge(&input);
    let in_scope = scope.matcher();
    judged.owners.retain(|o| in_scope(&o.transactional_id));
    let kept: BTreeSet<&str> = judged
        .owners
        .iter()
        .filter_map(|o| o.attribution.as_ref())
        .map(|a| a.application.as_str())
        .collect();
    let kept: BTreeSet<String> = kept.into_iter().map(str::to_string).collect();
    judged
        .applications
        .retain(|a| kept.contains(&a.application));
    OwnersRead {
        input,
        judged,
        listing_failures,
        held,
    }
}

/// The read `kdp owners` judges, and the brokers whose ListTransactions
/// failed; what `prior` holds is not asked again.
async fn read_input(
    client: &SharedClient,
    scope: &Scope,
    now_ms: i64,
    prior: Prior,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<(OwnersInput, Vec<(i32, KeyError)>)> {
    let (listing, mut described) = match prior.transactions {
        Some(t) => (t.listed, t.described),
        None => (None, BTreeMap::new()),
    };
    let (listed, listing_failures) = match listing {
        Some(l) => l,
        None => {
            let listings = list_transactions(client, &Default::default(), opts, bound).await?;
            let mut listed = BTreeSet::new();
            let mut listing_failures = Vec::new();
            for (broker, l) in listings {
                match l {
                    Ok(l) => listed.extend(l.transactions.into_iter().map(|t| t.transactional_id)),
                    Err(e) => listing_failures.push((broker, e)),
                }
            }
            (listed, listing_failures)
        }
    };
    // the ids asked about, then their Flink siblings (judged together)
    let in_scope = scope.matcher();
    let mut wanted: BTreeSet<String> = listed.iter().filter(|id| in_scope(id)).cloned().collect();
    wanted.extend(scope.transactional_ids.iter().cloned());
    let stems: BTreeSet<&str> = wanted.iter().filter_map(|id| stem(id)).collect();
    let siblings: Vec<String> = listed
        .iter()
        .filter(|id| stem(id).is_some_and(|s| stems.contains(s)))
        .cloned()
        .collect();
    wanted.extend(siblings);

    let (listed_groups, group_listing_failures, probed, mut members) = match prior.groups {
        Some(g) => (g.listed, g.listing_failures, g.visibility, g.members),
        None => {
            let groups_listed = list_groups(client, &Default::default(), opts, bound).await?;
            let mut listed_groups = BTreeMap::new();
            let mut failures = Vec::new();
            for (broker, l) in groups_listed {
                match l {
                    Ok(groups) => {
                        for g in groups {
                            let protocol = GroupProtocol::from_names(&g.protocol_type, "");
                            listed_groups
                                .insert(g.group_id, (protocol, g.group_type, g.coordinator));
                        }
                    }
                    Err(e) => failures.push((broker, e)),
                }
            }
            (listed_groups, failures, None, BTreeMap::new())
        }
    };
    let coordinators: BTreeMap<String, i32> = listed_groups
        .iter()
        .map(|(g, (_, _, c))| (g.clone(), *c))
        .collect();
    // the groups that can own the ids: Streams applications by name,
    // every Connect cluster, and the groups asked for
    let mut asked: BTreeSet<String> = wanted
        .iter()
        .filter_map(|id| scheme::streams(id).map(|s| s.application_id))
        .collect();
    asked.extend(
        listed_groups
            .iter()
            .filter(|(_, (p, _, _))| *p == GroupProtocol::Connect)
            .map(|(g, _)| g.clone()),
    );
    asked.extend(scope.groups.iter().cloned());
    let typed: Vec<(String, Option<GroupType>)> = asked
        .iter()
        .filter(|g| listed_groups.contains_key(*g) || scope.groups.contains(g))
        .map(|g| (g.clone(), listed_groups.get(g).and_then(|l| l.1.clone())))
        .collect();
    // only what `prior` did not read
    let to_describe: Vec<(String, Option<GroupType>)> = typed
        .iter()
        .filter(|(g, _)| !members.contains_key(g))
        .cloned()
        .collect();
    let ids: Vec<String> = wanted.iter().cloned().collect();
    let undescribed: Vec<String> = ids
        .iter()
        .filter(|id| !described.contains_key(*id))
        .cloned()
        .collect();
    let (more, described_members, visibility) = tokio::join!(
        async {
            if undescribed.is_empty() {
                BTreeMap::new()
            } else {
                describe_transactions(client, undescribed, opts, bound).await
            }
        },
        describe_members_at(client, &to_describe, &coordinators, opts, bound),
        async {
            match probed {
                Some(v) => v,
                None => probe_visibility(client, opts, bound).await,
            }
        }
    );
    members.extend(described_members?);
    described.extend(more);
    let transactions = ids
        .iter()
        .map(|id| match described.remove(id) {
            Some(d) => TxnEntry {
                transactional_id: id.clone(),
                coordinator: d.coordinator,
                described: d.result,
            },
            None => TxnEntry {
                transactional_id: id.clone(),
                coordinator: None,
                described: Err(KeyError::client(
                    ErrorCode::REQUEST_TIMED_OUT,
                    "no answer from its coordinator",
                )),
            },
        })
        .collect();
    let mut groups = BTreeMap::new();
    for (g, _) in &typed {
        let listing = listed_groups.get(g);
        let described = match (members.remove(g), listing) {
            (Some(d), _) => d,
            // a type kdp does not describe
            (None, Some((_, Some(t @ (GroupType::Share | GroupType::Other(_))), _))) => {
                Err(KeyError::client(
                    ErrorCode::UNSUPPORTED_VERSION,
                    format!("kdp does not describe {} groups", t.name()),
                ))
            }
            (None, _) => Err(KeyError::client(
                ErrorCode::REQUEST_TIMED_OUT,
                "no answer from its coordinator",
            )),
        };
        let listed = listing.map(|l| l.0.clone());
        groups.insert(g.clone(), GroupSeen { listed, described });
    }
    // Connect clusters not asked about still make their ids Connect's
    for (g, (protocol, _, _)) in &listed_groups {
        if !groups.contains_key(g) && *protocol == GroupProtocol::Connect {
            let e = KeyError::client(ErrorCode::UNKNOWN_SERVER_ERROR, "not described");
            groups.insert(
                g.clone(),
                GroupSeen {
                    listed: Some(protocol.clone()),
                    described: Err(e),
                },
            );
        }
    }
    let input = OwnersInput {
        now_ms,
        transactions,
        listing_complete: listing_failures.is_empty(),
        groups,
        group_listing_failures,
        visibility,
        held: None,
    };
    Ok((input, listing_failures))
}

/// Whether the group listing may hide groups: the committed offsets of a
/// group id nobody uses.
async fn probe_visibility(
    client: &SharedClient,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Visibility {
    let probe = crate::groups::probe_id();
    let no_coordinators = BTreeMap::new();
    match committed_offsets_at(client, vec![probe.clone()], &no_coordinators, opts, bound).await {
        Ok(mut p) => visibility(p.remove(&probe)),
        Err(e) => Visibility::Unknown(KeyError::client(
            ErrorCode::UNKNOWN_SERVER_ERROR,
            e.to_string(),
        )),
    }
}
