//! `kdp blocked`: partitions whose LSO is below the high watermark, the
//! transaction pinning each, and the consumer groups it holds back, each
//! blocked row ending with the command that unblocks it. The diagnosis is
//! kdp-domain's ([`kdp_domain::diagnose::blocked`]); this file connects,
//! gathers and renders.

use std::io::{self, Write};
use std::time::Duration;

use kdp_domain::diagnose::blocked::{
    blocked, AutoAbort, Blocked, BlockedOptions, Gap, GroupVerdict, HeldGap, HeldGroups, Unblock,
};
use kdp_domain::groups::{advice, GroupsRead, Visibility};
use kdp_domain::retained::Retain;
use kdp_wire::ErrorCode;
use kdp_workflows::blocked::{gather_keeping, Gathered};
use kdp_workflows::groups::{Held, ReadOptions};
use kdp_workflows::join::JoinOptions;
use serde::Serialize;

use crate::cmd::cluster::{self, ClusterArgs, Connected};
use crate::cmd::owner_of;
use crate::cmd::repair;
use crate::cmd::watch::{self, WatchArgs};
use crate::exit;
use crate::output::colour::{self, Style};
use crate::output::records::{self, or_dash, Record};
use crate::output::table::{plain, Cell, Column};
use crate::output::{age, Output, Rfc3339};

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
A partition is pinned when its last stable offset (LSO) is below its high watermark: an open
transaction holds back every record after its first offset from read_committed consumers. For
each pinned partition kdp shows the records held back (HW - LSO), the transaction holding the
LSO (producer, transactional id, coordinator state, age, how long its producer has written
nothing (Idle), and when its coordinator aborts it on its own: start + timeout, or 'never'
where no coordinator tracks it), and every consumer group with a committed offset there, with
its state, its members (DescribeGroups for classic groups, ConsumerGroupDescribe for KIP-848
consumer groups) and a verdict:
  blocked       committed at the LSO behind a transaction whose producer has written nothing
                for --blocked-after or longer (or whose last write is unknown): a read_committed
                consumer waits there until the transaction is ended
  waiting       committed at the LSO behind a live transaction (its producer wrote within
                --blocked-after): its producer commits it, or its coordinator aborts it at
                AutoAbort; on a busy transactional topic a caught-up group is here most of the
                time. Not a problem (exit 0), and kdp never suggests fencing a live producer
  lagging       committed below the LSO: records remain before it blocks
  past the LSO  committed beyond it: the group reads uncommitted records
  no offset     (a --group with offsets on the topic) nothing committed on this partition
  unknown       its offset or the group could not be read (Error names why, e.g.
                GROUP_AUTHORIZATION_FAILED, or GROUP_ID_NOT_FOUND for a --group its coordinator
                does not know): it may be blocked; such a group gets a row without a partition
A group with no members (Members 0, state Empty) shows so beside its verdict: nobody waits
behind its offset until it comes back.
Each pinned partition ends with what unblocks it, by find-hanging --repair's rules:
kdp force-terminate --transactional-id X where its coordinator tracks the Ongoing transaction
(left alone, the coordinator aborts it only at AutoAbort; force-terminate fences its producer),
kdp abort ... where no coordinator knows the producer (by --start-offset when kdp cannot tell
which coordinator epoch to use), 'wait' for a live transaction or while the coordinator writes a
decided outcome, or '-' when only the coordinator may finish it.
Raise --blocked-after for producers that stay quiet inside long transactions (a Flink sink
writes nothing between checkpoints): a killed producer's transaction then shows as waiting for
that long. --blocked-after 0 calls every group at the LSO blocked.

Whole cluster by default; --group and --topic narrow it. Kafka's ListGroups silently leaves out
groups the principal may not DESCRIBE, so a whole-cluster scan also asks for a group id nobody
uses: refused, the listing may be missing groups, and kdp says so and does not exit 0.
Exit status: 0 nothing is blocked (groups may be waiting), 4 a group is blocked, 1 some answers
are missing (and nothing is blocked), 2 bad usage, 3 the cluster could not be reached.

Examples:
  kdp blocked --bootstrap-server localhost:9092
  kdp blocked --bootstrap-server localhost:9092 --group payments-ledger --output json
  kdp blocked --bootstrap-server localhost:9092 --topic payments --blocked-after 10m")]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// Only this consumer group; repeat for several. Default: every group listed.
    #[arg(long, value_name = "GROUP")]
    pub group: Vec<String>,
    /// Only this topic; repeat for several. Default: every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// A group at the LSO is blocked once the producer of the transaction there has written
    /// nothing for this long; before, it is waiting on a live transaction (0: always blocked).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = crate::duration::parse_age)]
    pub blocked_after: Duration,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    #[command(flatten)]
    pub watch: WatchArgs,
}

/// One group on one pinned partition (or the partition alone, without
/// groups), or a group whose committed offsets could not be read at all
/// (then the partition's fields are null).
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Row {
    topic: Option<String>,
    partition: Option<i32>,
    high_watermark: Option<i64>,
    last_stable_offset: Option<i64>,
    held_back: Option<i64>,
    producer_id: Option<i64>,
    transactional_id: Option<String>,
    coordinator_state: Option<String>,
    transaction_start_rfc3339: Option<Rfc3339>,
    transaction_age_ms: Option<i64>,
    /// Since the pinning producer last wrote (any partition described).
    producer_idle_ms: Option<i64>,
    /// RFC 3339, `never`, or `decided (PrepareCommit)`; null when kdp
    /// cannot tell.
    auto_abort: Option<String>,
    group: Option<String>,
    group_state: Option<String>,
    /// `classic` or `consumer` (KIP-848).
    group_type: Option<String>,
    /// Members now; null when not described.
    members: Option<u32>,
    committed_offset: Option<i64>,
    verdict: Option<&'static str>,
    /// Why the group's offset is unknown (verdict `unknown`): Kafka's error name.
    error: Option<&'static str>,
    /// The command line, `wait`, or none.
    unblock: Option<String>,
    /// The verdict itself, which the Verdict cell is coloured from.
    #[serde(skip)]
    judged: Option<GroupVerdict>,
    /// Who writes the pinning transactional id (`kdp owners`); null without
    /// one, or when the owners could not be read.
    owner: Option<owner_of::OwnerField>,
    #[serde(skip)]
    owner_cell: Cell,
    #[serde(skip)]
    started_ms: Option<i64>,
    #[serde(skip)]
    last_write_ms: Option<i64>,
    #[serde(skip)]
    now_ms: i64,
}

impl Record for Row {
    fn cells(&self) -> Vec<Cell> {
        let verdict = Cell::new(
            match (self.verdict, self.error) {
                (Some(v), Some(e)) => format!("{v} ({e})"),
                (v, _) => or_dash(v),
            },
            self.judged
                .map_or(Style::Plain, |v| Style::from(v.severity())),
        );
        let mut cells = plain(vec![
            or_dash(self.topic.as_deref()),
            or_dash(self.partition),
            or_dash(self.held_back),
            or_dash(self.transactional_id.as_deref()),
            or_dash(self.producer_id),
            or_dash(self.coordinator_state.as_deref()),
            self.started_ms
                .map_or_else(|| "-".into(), |s| age(s, self.now_ms)),
            self.last_write_ms
                .map_or_else(|| "-".into(), |w| age(w, self.now_ms)),
            or_dash(self.auto_abort.as_deref()),
            or_dash(self.group.as_deref()),
            or_dash(self.group_state.as_deref()),
            or_dash(self.members),
            or_dash(self.committed_offset),
        ]);
        cells.push(verdict);
        cells.push(or_dash(self.unblock.as_deref()).into());
        cells.push(self.owner_cell.clone());
        cells
    }
}

const HEADER: &[Column] = &[
    Column::new("Topic", 0),
    Column::new("Partition", 0),
    Column::new("HeldBack", 0),
    Column::text("TransactionalId", 2),
    Column::new("ProducerId", 4),
    Column::new("CoordinatorState", 5),
    Column::new("TxnAge", 3),
    Column::new("LastWrite", 3),
    Column::new("AutoAbort", 3),
    Column::text("Group", 0),
    Column::new("GroupState", 1),
    Column::new("Members", 1),
    Column::new("Committed", 2),
    Column::text("Verdict", 0),
    Column::text("Unblock", 1),
    Column::text("Owner", 6),
];

fn auto_abort(a: Option<AutoAbort>) -> Option<String> {
    match a? {
        AutoAbort::At(ms) => Rfc3339::at(ms).map(|t| t.to_string()),
        AutoAbort::Decided(state) => Some(format!("decided ({})", state.name())),
        AutoAbort::Never => Some("never".into()),
        AutoAbort::Unknown => None,
    }
}

/// `a` as a POSIX shell word.
pub(crate) fn shell_word(a: &str) -> String {
    let plain = !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

fn unblock_text(u: &Option<Unblock>) -> Option<String> {
    match u {
        Some(Unblock::Command(args)) => Some(
            args.iter()
                .map(|a| shell_word(a))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        Some(Unblock::Wait) => Some("wait".into()),
        None => None,
    }
}

/// The rows of a diagnosis: one per group on each pinned partition, one
/// for a pinned partition no group reads, and one for each group that could
/// not be read at all or that its coordinator does not know (an
/// authorization or not-found row, never silence).
pub fn rows(b: &Blocked, now_ms: i64) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in &b.partitions {
        let base = |group: Option<&kdp_domain::diagnose::blocked::GroupRow>| {
            let pin = p.pinned_by.as_ref();
            Row {
                topic: Some(p.topic.clone()),
                partition: Some(p.partition),
                high_watermark: Some(p.high_watermark),
                last_stable_offset: Some(p.last_stable_offset),
                held_back: Some(p.held_back()),
                producer_id: pin.map(|t| t.producer_id),
                transactional_id: pin.and_then(|t| t.transactional_id.clone()),
                coordinator_state: pin
                    .and_then(|t| t.coordinator_state)
                    .map(|s| s.name().into()),
                transaction_start_rfc3339: pin.and_then(|t| t.started_ms).and_then(Rfc3339::at),
                transaction_age_ms: pin
                    .and_then(|t| t.started_ms)
                    .map(|s| now_ms.saturating_sub(s)),
                producer_idle_ms: pin.and_then(|t| t.idle_ms(now_ms)),
                auto_abort: auto_abort(pin.map(|t| t.auto_abort)),
                group: group.map(|g| g.group_id.clone()),
                group_state: group
                    .and_then(|g| g.state.as_ref())
                    .map(|s| s.name().to_string()),
                group_type: group
                    .and_then(|g| g.group_type.as_ref())
                    .map(|t| t.name().to_string()),
                members: group.and_then(|g| g.members),
                committed_offset: group.and_then(|g| g.committed),
                verdict: group.map(|g| g.verdict.label()),
                error: match group.map(|g| g.verdict) {
                    Some(GroupVerdict::Unread(code)) => Some(code.label()),
                    _ => None,
                },
                unblock: match group.map(|g| g.verdict) {
                    // the command (or `wait`) ends the rows at the LSO, and
                    // a partition alone
                    Some(GroupVerdict::Blocked | GroupVerdict::Waiting) | None => {
                        unblock_text(&p.unblock)
                    }
                    Some(_) => None,
                },
                judged: group.map(|g| g.verdict),
                owner: None,
                owner_cell: "-".into(),
                started_ms: pin.and_then(|t| t.started_ms),
                last_write_ms: pin.and_then(|t| t.last_write_ms),
                now_ms,
            }
        };
        if p.groups.is_empty() {
            rows.push(base(None));
        }
        for g in &p.groups {
            rows.push(base(Some(g)));
        }
    }
    for gap in &b.gaps {
        // a group that could not be read at all is unread on every partition
        let (group, code) = match gap {
            Gap::GroupOffsets(group, e) => (group, e.code),
            Gap::UnknownGroup(group) => (group, ErrorCode::GROUP_ID_NOT_FOUND),
            _ => continue,
        };
        let judged = GroupVerdict::Unread(code);
        rows.push(Row {
            topic: None,
            partition: None,
            high_watermark: None,
            last_stable_offset: None,
            held_back: None,
            producer_id: None,
            transactional_id: None,
            coordinator_state: None,
            transaction_start_rfc3339: None,
            transaction_age_ms: None,
            producer_idle_ms: None,
            auto_abort: None,
            group: Some(group.clone()),
            group_state: None,
            group_type: None,
            members: None,
            committed_offset: None,
            verdict: Some(judged.label()),
            error: Some(code.label()),
            unblock: None,
            judged: Some(judged),
            owner: None,
            owner_cell: "-".into(),
            started_ms: None,
            last_write_ms: None,
            now_ms,
        });
    }
    rows
}

fn report_gap(g: &Gap) {
    let code = match g {
        Gap::PartitionOffsets(_, e) | Gap::GroupOffsets(_, e) | Gap::GroupMembers(_, e) => e.code,
        Gap::GroupPartition(_, _, code) => *code,
        Gap::UnknownGroup(_) => ErrorCode::GROUP_ID_NOT_FOUND,
    };
    match g {
        Gap::PartitionOffsets((t, p), e) => eprintln!(
            "kdp: {t}-{p}: offsets not read: {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        ),
        Gap::GroupOffsets(group, e) => eprintln!(
            "kdp: group {group}: committed offsets not read: {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        ),
        Gap::GroupPartition(group, (t, p), code) => {
            eprintln!("kdp: group {group}: {t}-{p}: {}", code.label())
        }
        Gap::GroupMembers(group, e) => eprintln!(
            "kdp: group {group}: members not read (whether anyone waits is unknown): {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        ),
        Gap::UnknownGroup(group) => eprintln!(
            "kdp: group {group}: its coordinator does not know it (nothing committed, not \
             described): is the id right?"
        ),
    }
    if let (Gap::GroupOffsets(..) | Gap::GroupPartition(..) | Gap::GroupMembers(..), Some(hint)) =
        (g, advice(code))
    {
        eprintln!("kdp:   {hint}");
    }
}

/// `kdp blocked`.
pub fn run(args: Args) -> i32 {
    let every = args.watch.watch;
    watch::run(every, "kdp blocked", async |out| {
        run_to(args.clone(), out).await
    })
}

/// The command, output on `out`.
pub async fn run_to(args: Args, out: &mut dyn Write) -> i32 {
    let conn = match cluster::connect(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    run_on(&conn, &args, out).await
}

/// The blocked-groups column of `find-hanging` and `describe
/// --with-transactions` (kdp-workflows reads the groups once, and only
/// when a partition is pinned): what could not be read makes a holder's
/// column unknown (`-`, null), said once on stderr, never 0.
pub fn report_held(held: Held) -> HeldGroups {
    let read = match held.read {
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            colour::emit(&format!("kdp: consumer groups not read: {e}"));
            None
        }
        None => None,
    };
    if held.groups.is_partial() {
        // short enough for an 80-column terminal
        let why = match HeldGap::of(read.as_ref()) {
            HeldGap::NotRead => "the groups could not be read".to_string(),
            HeldGap::ListingFailed { brokers } => {
                format!("{brokers} broker(s) did not list their groups")
            }
            HeldGap::MayHide => "ACLs may hide groups from the listing".into(),
            HeldGap::OffsetsNotRead => "some groups' or partitions' offsets were not read".into(),
        };
        colour::emit(&format!("kdp: BlockedGroups unknown ('-'): {why}"));
        colour::emit("kdp: `kdp blocked` shows what it could read, group by group");
    }
    held.groups
}

/// What was not checked, as one clause per kind (empty: everything was).
fn unchecked(
    failed_partitions: usize,
    listing_failed: usize,
    visibility: &Visibility,
    b: &Blocked,
) -> Vec<String> {
    let mut out = Vec::new();
    let count = |f: fn(&Gap) -> bool| b.gaps.iter().filter(|g| f(g)).count();
    if failed_partitions > 0 {
        out.push(format!("{failed_partitions} partition(s) not described"));
    }
    let n = count(|g| matches!(g, Gap::PartitionOffsets(..)));
    if n > 0 {
        out.push(format!("{n} partition(s) whose offsets were not read"));
    }
    let n = count(|g| matches!(g, Gap::GroupOffsets(..) | Gap::UnknownGroup(_)));
    if n > 0 {
        out.push(format!("{n} group(s) not read"));
    }
    let n = count(|g| matches!(g, Gap::GroupPartition(..)));
    if n > 0 {
        out.push(format!("{n} committed offset(s) refused"));
    }
    let n = count(|g| matches!(g, Gap::GroupMembers(..)));
    if n > 0 {
        out.push(format!("{n} group(s) whose members were not read"));
    }
    if listing_failed > 0 {
        out.push(format!(
            "{listing_failed} broker(s) that did not list their groups"
        ));
    }
    if visibility.may_hide() {
        out.push("groups the listing may hide from this principal".into());
    }
    out
}

/// The command on a connected client (the in-process tests' entry).
pub async fn run_on(conn: &Connected, args: &Args, out: &mut dyn Write) -> i32 {
    let describe = conn.describe_options(cluster::selection(&args.topic, &[]), None);
    let dopts = conn.describe_options(None, None).driver_options();
    let read = ReadOptions {
        only: args.group.clone(),
        members: true,
    };
    // the groups do not wait for the producers: both at once, one budget;
    // the Owner column takes what they read (`prior`), asking it no more
    // of the producers, those with an open transaction are kept, and the
    // others' latest writes (a pinning producer's LastWrite)
    let (Gathered { joined, groups }, prior) = gather_keeping(
        &conn.client,
        &JoinOptions::new(describe, true).retaining(Retain::SelectedAndWrites),
        &read,
        &dopts,
        &conn.bound,
    )
    .await;
    let joined = match cluster::reported(conn, joined) {
        Ok(j) => j,
        Err(code) => return code,
    };
    let failed = cluster::report_failed_partitions(&joined);
    let GroupsRead {
        answers,
        listing_failures,
        visibility,
        ..
    } = match groups {
        Ok(r) => r,
        Err(e) => return exit::report(&e),
    };
    for (broker, e) in &listing_failures {
        eprintln!(
            "kdp: broker {broker} did not list its groups: {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        );
    }
    match &visibility {
        Visibility::Limited => eprintln!(
            "kdp: the group listing may leave out groups: this principal may not DESCRIBE a \
             group id nobody uses, so its ACLs do not cover every group and Kafka lists only \
             those they cover (kafka-acls.sh --add --allow-principal <principal> --operation \
             Describe --group '*' lets it see them all; or name groups with --group)"
        ),
        Visibility::Unknown(e) => eprintln!(
            "kdp: whether the group listing leaves out groups is unknown: the probe for \
             DESCRIBE on every group got {} {}",
            e.name(),
            e.message.as_deref().unwrap_or("")
        ),
        Visibility::Named | Visibility::Any => {}
    }
    let max_timeout_ms = joined.max_timeout_ms();
    let diagnosis = blocked(
        &joined,
        &answers,
        &BlockedOptions {
            max_timeout_ms,
            blocked_after_ms: i64::try_from(args.blocked_after.as_millis()).unwrap_or(i64::MAX),
            groups: args.group.clone(),
            connection: repair::connection_flags(&args.cluster),
            groups_only: false,
        },
    );
    for g in &diagnosis.gaps {
        report_gap(g);
    }
    let mut diagnosis = diagnosis;
    let ids: std::collections::BTreeSet<String> = diagnosis
        .partitions
        .iter()
        .filter_map(|p| p.pinned_by.as_ref()?.transactional_id.clone())
        .collect();
    let owners = owner_of::owners_after(conn, ids.into_iter().collect(), prior).await;
    // never suggest ending a live owner's transaction
    for p in &mut diagnosis.partitions {
        let id = p
            .pinned_by
            .as_ref()
            .and_then(|t| t.transactional_id.as_ref());
        if let (Some(Unblock::Command(_)), Some(why)) = (
            &p.unblock,
            owner_of::spared(id.and_then(|id| owners.get(id))),
        ) {
            eprintln!("kdp: {}-{}: wait: {why}", p.topic, p.partition);
            p.unblock = Some(Unblock::Wait);
        }
    }
    let mut rows = rows(&diagnosis, joined.now_ms);
    for r in &mut rows {
        let o = r.transactional_id.as_ref().and_then(|id| owners.get(id));
        r.owner = owner_of::field(o);
        r.owner_cell = owner_of::cell(o);
    }
    if let Err(e) = records::write(out, args.output, "Blocked", HEADER, &rows) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("kdp: cannot write output: {e}");
            return exit::PARTIAL;
        }
    }
    let checked = joined.summary.partitions.saturating_sub(failed);
    let mut missing = unchecked(failed, listing_failures.len(), &visibility, &diagnosis);
    if !joined.listing_errors.is_empty() {
        missing.push(format!(
            "{} broker(s) that did not list their transactions",
            joined.listing_errors.len()
        ));
    }
    let pinned = diagnosis.partitions.len();
    let waiting = diagnosis
        .partitions
        .iter()
        .flat_map(|p| &p.groups)
        .filter(|g| g.verdict == GroupVerdict::Waiting)
        .count();
    if diagnosis.any_blocked() {
        if !missing.is_empty() {
            eprintln!("kdp: not checked: {}", missing.join(", "));
        }
        return exit::FOUND;
    }
    if checked == 0 {
        // an answer from nothing is no answer: never "all clear"
        eprintln!("kdp: nothing was checked: no partition could be described");
        return exit::PARTIAL;
    }
    if !missing.is_empty() {
        // never "nothing pinned" from a partial answer
        eprintln!(
            "kdp: no blocked group found, but the answer is partial; not checked: {}",
            missing.join(", ")
        );
        return exit::PARTIAL;
    }
    if args.output == Output::Table {
        let whom = if args.group.is_empty() {
            String::new()
        } else {
            format!(" for {}", args.group.join(", "))
        };
        if waiting > 0 {
            eprintln!(
                "kdp: nothing blocked{whom}: {waiting} group(s) at the LSO of a live transaction \
                 (its producer wrote within --blocked-after {})",
                humantime::format_duration(args.blocked_after)
            );
        } else if rows.is_empty() && args.group.is_empty() {
            eprintln!("kdp: no pinned partition in {checked} partitions");
        } else if rows.is_empty() {
            eprintln!(
                "kdp: nothing blocked{whom}: no committed offset on a pinned partition \
                 ({checked} partitions checked)"
            );
        } else if pinned > 0 {
            eprintln!("kdp: nothing blocked{whom}");
        }
    }
    exit::OK
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use clap::Parser;
    use kdp_test_support::StallCluster;
    use kdp_wire::api;
    use kdp_wire::messages::{
        ConsumerGroupDescribeRequest, DescribeGroupsRequest, DescribeTransactionsRequest,
        ListGroupsRequest, OffsetFetchRequest, StreamsGroupDescribeRequest,
    };
    use serde_json::Value;

    use super::*;
    use crate::cmd::cluster::tests::connected;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(extra: &[&str]) -> Args {
        let argv = ["blocked", "--output", "json"].iter().chain(extra);
        Cli::try_parse_from(argv).expect("arguments").args
    }

    /// `kdp blocked ARGS --output json` on `cluster`, in process: the exit
    /// status and the rows.
    async fn blocked_on(cluster: &StallCluster, extra: &[&str]) -> (i32, Vec<Value>) {
        let conn = connected(cluster, Duration::from_secs(30)).await;
        let mut out = Vec::new();
        let code = run_on(&conn, &args(extra), &mut out).await;
        let doc: Value = serde_json::from_slice(&out).expect("JSON");
        (code, doc["Blocked"].as_array().cloned().unwrap_or_default())
    }

    /// What a row says of a group (times left out: they move).
    fn verdicts(rows: &[Value]) -> Vec<Value> {
        rows.iter()
            .map(|r| {
                serde_json::json!([
                    r["Topic"],
                    r["Partition"],
                    r["Group"],
                    r["GroupState"],
                    r["Members"],
                    r["CommittedOffset"],
                    r["Verdict"],
                    r["Unblock"]
                ])
            })
            .collect()
    }

    /// The first `n` answers of every coordinator say it is still loading
    /// its groups (COORDINATOR_LOAD_IN_PROGRESS): ListGroups, OffsetFetch,
    /// DescribeGroups and ConsumerGroupDescribe. Kafka's clients ask again;
    /// so does kdp, and the answer is the same as without the loading.
    #[tokio::test(start_paused = true)]
    async fn a_loading_coordinator_is_asked_again_and_the_answer_is_whole() {
        let cluster = StallCluster::demo();
        let (code, rows) = blocked_on(&cluster, &[]).await;
        assert_eq!(code, exit::FOUND);
        let before = verdicts(&rows);
        assert!(
            before.iter().any(|v| v[6] == "blocked") && before.iter().any(|v| v[6] == "waiting"),
            "{before:?}"
        );
        let loading = ErrorCode::COORDINATOR_LOAD_IN_PROGRESS;
        let counter = || Arc::new(AtomicUsize::new(0));
        let (listed, fetched, described, consumer) = (counter(), counter(), counter(), counter());
        let first = |n: &Arc<AtomicUsize>| n.fetch_add(1, Ordering::SeqCst) < 2;
        {
            let n = listed.clone();
            cluster.edit::<ListGroupsRequest, _>(move |_, _, resp| {
                if first(&n) {
                    resp.error_code = loading;
                    resp.groups.clear();
                }
            });
        }
        {
            let n = fetched.clone();
            cluster.edit::<OffsetFetchRequest, _>(move |_, _, resp| {
                if first(&n) {
                    resp.error_code = loading;
                    for g in &mut resp.groups {
                        g.error_code = loading;
                        g.topics.clear();
                    }
                }
            });
        }
        {
            let n = described.clone();
            cluster.edit::<DescribeGroupsRequest, _>(move |_, _, resp| {
                if first(&n) {
                    for g in &mut resp.groups {
                        g.error_code = loading;
                    }
                }
            });
        }
        {
            let n = consumer.clone();
            cluster.edit::<ConsumerGroupDescribeRequest, _>(move |_, _, resp| {
                if first(&n) {
                    for g in &mut resp.groups {
                        g.error_code = loading;
                    }
                }
            });
        }
        let asked = |api| cluster.asked(api);
        let (lists, fetches) = (asked(api::LIST_GROUPS), asked(api::OFFSET_FETCH));
        let (code, rows) = blocked_on(&cluster, &[]).await;
        assert_eq!(code, exit::FOUND, "{rows:?}");
        assert_eq!(verdicts(&rows), before);
        // each loading answer was asked again
        for n in [&listed, &fetched, &described, &consumer] {
            assert!(n.load(Ordering::SeqCst) > 2, "{n:?}");
        }
        assert!(
            asked(api::LIST_GROUPS) - lists > 3,
            "3 brokers, 2 of them loading"
        );
        assert!(asked(api::OFFSET_FETCH) - fetches > 2);
    }

    /// A coordinator that never finishes loading: by the deadline the
    /// groups it holds are gaps (rows naming the error), the answer is
    /// partial, and no group is called clear.
    #[tokio::test(start_paused = true)]
    async fn a_coordinator_that_never_loads_is_a_partial_answer() {
        let cluster = StallCluster::demo();
        let loading = ErrorCode::COORDINATOR_LOAD_IN_PROGRESS;
        cluster.edit::<OffsetFetchRequest, _>(move |_, _, resp| {
            resp.error_code = loading;
            for g in &mut resp.groups {
                g.error_code = loading;
                g.topics.clear();
            }
        });
        let (code, rows) = blocked_on(&cluster, &["--group", "payments-ledger"]).await;
        assert_eq!(code, exit::PARTIAL, "{rows:?}");
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0]["Verdict"], "unknown");
        assert_eq!(rows[0]["Error"], "COORDINATOR_LOAD_IN_PROGRESS");
    }

    /// Each key `asked` names, and how often: none more than once.
    fn asked_once(what: &str, asked: impl IntoIterator<Item = String>) -> usize {
        let mut seen = std::collections::BTreeMap::new();
        for k in asked {
            *seen.entry(k).or_insert(0) += 1;
        }
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "{what} asked more than once: {twice:?}");
        seen.len()
    }

    /// The Owner column takes what `blocked` itself read: each broker lists
    /// its transactions and its groups once, each transactional id and each
    /// group is described once; and the owners are those `kdp owners`'
    /// own read finds.
    #[tokio::test(start_paused = true)]
    async fn the_owner_column_asks_nothing_twice() {
        let cluster =
            StallCluster::new(kdp_server::demo::owners_cluster().expect("the owners demo"));
        let (code, rows) = blocked_on(&cluster, &["--blocked-after", "0"]).await;
        assert_eq!(code, exit::FOUND, "{rows:?}");
        let brokers = cluster.cluster().brokers.len();
        assert_eq!(cluster.asked(api::LIST_TRANSACTIONS), brokers);
        assert_eq!(cluster.asked(api::LIST_GROUPS), brokers);
        let txns = cluster.requests::<DescribeTransactionsRequest>();
        let described = asked_once(
            "a transactional id",
            txns.into_iter().flat_map(|(_, r)| r.transactional_ids),
        );
        let groups = cluster
            .requests::<DescribeGroupsRequest>()
            .into_iter()
            .flat_map(|(_, r)| r.groups)
            .chain(
                cluster
                    .requests::<ConsumerGroupDescribeRequest>()
                    .into_iter()
                    .flat_map(|(_, r)| r.group_ids),
            )
            .chain(
                cluster
                    .requests::<StreamsGroupDescribeRequest>()
                    .into_iter()
                    .flat_map(|(_, r)| r.group_ids),
            );
        asked_once("a group", groups);
        // the owners' ids and their siblings were all described
        assert!(described > 10, "{described}");

        let ids: Vec<String> = rows
            .iter()
            .filter_map(|r| r["TransactionalId"].as_str().map(str::to_string))
            .collect();
        assert!(ids.len() > 5, "{rows:?}");
        let conn = connected(&cluster, Duration::from_secs(30)).await;
        let alone = owner_of::owners(&conn, ids).await;
        let mut verdicts = std::collections::BTreeSet::new();
        for r in &rows {
            let Some(id) = r["TransactionalId"].as_str() else {
                continue;
            };
            let own = serde_json::to_value(owner_of::field(alone.get(id))).expect("JSON");
            assert_eq!(r["Owner"], own, "{id}");
            verdicts.insert(own["Verdict"].to_string());
        }
        // live, orphaned, lingering, unattributed...: the column says
        // something, not `-` everywhere
        assert!(verdicts.len() >= 3, "{verdicts:?}");
    }

    /// `find-hanging`'s Owner column likewise takes the join's descriptions
    /// and the groups' listing and probe. Its join lists by producer id (most
    /// runs show no id to find an owner for), so the owners' siblings take
    /// one more listing, unfiltered.
    #[tokio::test(start_paused = true)]
    async fn find_hangings_owner_column_reuses_the_descriptions_and_groups() {
        #[derive(clap::Parser)]
        struct Hanging {
            #[command(flatten)]
            args: crate::cmd::find_hanging::Args,
        }
        let cluster =
            StallCluster::new(kdp_server::demo::owners_cluster().expect("the owners demo"));
        let argv = [
            "find-hanging",
            "--output",
            "json",
            "--all",
            "--max-transaction-timeout",
            "1s",
        ];
        let args = Hanging::try_parse_from(argv).expect("arguments").args;
        let conn = connected(&cluster, Duration::from_secs(30)).await;
        let mut out = Vec::new();
        crate::cmd::find_hanging::run_on(&conn, &args, &mut out).await;
        let doc: Value = serde_json::from_slice(&out).expect("JSON");
        let rows = doc["Transactions"].as_array().cloned().unwrap_or_default();
        let brokers = cluster.cluster().brokers.len();
        assert_eq!(cluster.asked(api::LIST_TRANSACTIONS), 2 * brokers);
        assert_eq!(cluster.asked(api::LIST_GROUPS), brokers);
        let txns = cluster.requests::<DescribeTransactionsRequest>();
        asked_once(
            "a transactional id",
            txns.into_iter().flat_map(|(_, r)| r.transactional_ids),
        );
        let probes = cluster
            .requests::<OffsetFetchRequest>()
            .into_iter()
            .flat_map(|(_, r)| {
                let v8 = r.groups.into_iter().map(|g| g.group_id);
                std::iter::once(r.group_id).chain(v8)
            })
            .filter(|g| g.starts_with("__kdp-acl-probe"))
            .count();
        assert_eq!(probes, 1);
        let owned = rows
            .iter()
            .filter(|r| r["Owner"]["Verdict"].is_string())
            .count();
        assert!(owned > 5, "{rows:?}");
    }
}
