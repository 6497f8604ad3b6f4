//! `kdp transactions` as `kafka-transactions.sh`: the coordinators' `list`
//! and `describe`, and every other subcommand of Kafka's tool under its
//! name (`describe-producers`, `find-hanging`, `abort`,
//! `forceTerminateTransaction`), so a Kafka user's commands work with
//! `kafka-transactions.sh` replaced by `kdp transactions`. The connection
//! flags go before or after the subcommand.

use crate::cmd::cluster::ClusterArgs;
use crate::cmd::{abort, describe, find_hanging, force_terminate, transactions};
use crate::output::Output;

/// `kdp transactions`.
#[derive(clap::Args, Debug, Clone)]
pub struct Command {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(subcommand)]
    pub command: Sub,
}

/// kafka-transactions.sh's subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum Sub {
    #[command(flatten)]
    Coordinator(transactions::Sub),
    /// The producers of partitions, as `kdp describe`.
    DescribeProducers(describe::Args),
    /// Hanging and stuck transactions, as `kdp find-hanging`.
    FindHanging(find_hanging::Args),
    /// A raw abort of one partition's open transaction, as `kdp abort`.
    Abort(abort::Args),
    /// End transactional ids' transactions and fence their producers, as `kdp force-terminate`.
    #[command(alias = "forceTerminateTransaction")]
    ForceTerminate(force_terminate::Args),
}

impl Command {
    /// The subcommand's `--output`, where it has one.
    pub fn output_mut(&mut self) -> Option<&mut Output> {
        match &mut self.command {
            Sub::Coordinator(transactions::Sub::List { output, .. })
            | Sub::Coordinator(transactions::Sub::Describe { output, .. }) => Some(output),
            Sub::DescribeProducers(a) => Some(&mut a.output),
            Sub::FindHanging(a) => Some(&mut a.output),
            Sub::Abort(_) | Sub::ForceTerminate(_) => None,
        }
    }

    /// The connection flags the subcommand uses (clap gave both the same
    /// values), to be filled in from the environment and the context.
    pub fn clusters_mut(&mut self) -> Vec<&mut ClusterArgs> {
        let mut v = vec![&mut self.cluster];
        match &mut self.command {
            Sub::Coordinator(_) | Sub::DescribeProducers(_) => {}
            Sub::FindHanging(a) => v.push(&mut a.cluster),
            Sub::Abort(a) => v.push(&mut a.cluster),
            Sub::ForceTerminate(a) => v.push(&mut a.cluster),
        }
        v
    }

    /// The connection flags of the subcommand, as parsed.
    #[cfg(test)]
    pub fn clusters_mut_ref(&self) -> &ClusterArgs {
        &self.cluster
    }
}

/// `kdp transactions ...`.
pub fn run(cmd: Command) -> i32 {
    match cmd.command {
        Sub::Coordinator(sub) => transactions::run(transactions::Command {
            cluster: cmd.cluster,
            args: transactions::Args { command: sub },
        }),
        Sub::DescribeProducers(a) => describe::run(a),
        Sub::FindHanging(a) => find_hanging::run(a),
        Sub::Abort(a) => abort::run(a),
        Sub::ForceTerminate(a) => force_terminate::run(a),
    }
}
