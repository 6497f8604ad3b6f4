//! What the commands say on stderr when part of an answer failed: one line
//! per cause with a count and the first ids, the cause of a partial answer
//! first, and a stalled step named as itself. In process, on
//! kdp-test-support's cluster and tokio's paused clock.

use std::time::Duration;

use clap::Parser;
use kdp_test_support::{Fault, Raw, StallCluster};
use kdp_wire::api::ApiKey;
use kdp_wire::messages::{ListTransactionsRequest, ListedTransaction};
use kdp_wire::ErrorCode;

use crate::cmd::cluster::tests::connected;
use crate::cmd::{abort, find_hanging, transactions};
use crate::exit;
use crate::output::colour;

#[derive(clap::Parser)]
struct Cli<T: clap::Args> {
    #[command(flatten)]
    args: T,
}

fn parse<T: clap::Args>(argv: &[&str]) -> T {
    Cli::<T>::try_parse_from(argv).expect("arguments").args
}

#[derive(clap::Parser)]
struct SubCli {
    #[command(subcommand)]
    sub: transactions::Sub,
}

/// How many ids the broker lists.
const LISTED: i64 = 300_000;

#[tokio::test(start_paused = true)]
async fn ids_listed_by_the_hundred_thousand_and_refused_are_one_line_not_one_each() {
    let cluster = StallCluster::demo();
    let conn = connected(&cluster, Duration::from_secs(60)).await;
    // broker 1 lists them all, the others nothing; no coordinator describes them
    cluster.edit::<ListTransactionsRequest, _>(|broker, _, resp| {
        resp.transaction_states = if broker == 1 {
            (0..LISTED)
                .map(|i| ListedTransaction {
                    transactional_id: format!("tx-{i:06}"),
                    producer_id: i,
                    transaction_state: "Ongoing".into(),
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        };
    });
    cluster.fault(
        ApiKey::DESCRIBE_TRANSACTIONS.0,
        Fault::Error(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    );
    let sub = SubCli::try_parse_from(["transactions", "list", "-o", "jsonl"])
        .expect("arguments")
        .sub;
    let mut out = Vec::new();
    colour::capture();
    let code = transactions::run_on(&conn, sub, &mut out).await;
    let lines = colour::captured();
    assert_eq!(code, exit::PARTIAL, "{lines:?}");
    assert_eq!(
        lines,
        [format!(
            "kdp: start time unknown for {LISTED} transactional ids: \
             TRANSACTIONAL_ID_AUTHORIZATION_FAILED (first 5: tx-000000, tx-000001, tx-000002, \
             tx-000003, tx-000004; -v lists all)"
        )]
    );
    // every listed id is still a row
    let rows = out.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(rows, LISTED as usize);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_list_transactions_answer_is_named_first_with_its_field_and_offset() {
    let cluster = StallCluster::demo();
    let conn = connected(&cluster, Duration::from_secs(30)).await;
    // broker 1's answer loses its last two bytes
    cluster.answer_raw(ApiKey::LIST_TRANSACTIONS, |broker, _, answer| {
        let cut = if broker == 1 { 2 } else { 0 };
        Raw::Frame(answer[..answer.len().saturating_sub(cut)].to_vec())
    });
    // and a broker that does not list its groups: secondary lines
    cluster.fault_on(
        2,
        ApiKey::LIST_GROUPS.0,
        Fault::Error(ErrorCode::COORDINATOR_NOT_AVAILABLE),
    );
    let args: find_hanging::Args = parse(&["find-hanging", "-o", "json"]);
    let mut out = Vec::new();
    colour::capture();
    let code = find_hanging::run_on(&conn, &args, &mut out).await;
    let lines = colour::captured();
    // the demo's hanging transaction is still found through the others
    assert_eq!(code, exit::FOUND, "{lines:?}");
    let first = lines.first().map_or("", String::as_str);
    assert!(
        first.starts_with("kdp: ListTransactions failed for broker 1: ")
            && first.contains("cannot decode ListTransactionsResponse")
            && first.contains("at byte")
            && first.contains("TransactionStates"),
        "{lines:#?}"
    );
    // what follows from it after it
    assert!(
        lines[1..]
            .iter()
            .any(|l| l.contains("BlockedGroups unknown")),
        "{lines:#?}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("ListTransactions"))
            .count(),
        1,
        "{lines:#?}"
    );
}

/// Every line of `lines` that says a step did not answer or finish.
fn stalled(lines: &[String]) -> Vec<&String> {
    lines
        .iter()
        .filter(|l| l.contains("did not answer") || l.contains("did not finish"))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_stalled_find_coordinator_is_named_not_the_describe_behind_it() {
    for command in ["find-hanging", "abort"] {
        let cluster = StallCluster::demo();
        let conn = connected(&cluster, Duration::from_secs(30)).await;
        cluster.stall(ApiKey::FIND_COORDINATOR.0);
        let mut out = Vec::new();
        colour::capture();
        let code = match command {
            "find-hanging" => {
                let args: find_hanging::Args = parse(&["find-hanging", "-o", "json"]);
                find_hanging::run_on(&conn, &args, &mut out).await
            }
            _ => {
                let args: abort::Args = parse(&[
                    "abort",
                    "--topic",
                    "payments",
                    "--partition",
                    "0",
                    "--start-offset",
                    "40112",
                    "--dry-run",
                ]);
                let target = abort::target(&args).expect("a target");
                abort::run_on(&conn, &args, target, &mut out).await
            }
        };
        let lines = colour::captured();
        assert_ne!(code, exit::OK, "{command}: {lines:#?}");
        let stalled = stalled(&lines);
        assert!(
            stalled
                .iter()
                .any(|l| l.starts_with("kdp: FindCoordinator did not answer within --timeout")),
            "{command}: {lines:#?}"
        );
        // nothing else stalled: not the describe behind it, not the
        // groups' read that found no time left
        assert_eq!(stalled.len(), 1, "{command}: {lines:#?}");
    }
}
