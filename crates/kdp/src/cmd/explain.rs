//! `kdp explain NAME`: what a client exception operators search for, or a
//! verdict or flag kdp prints, means, and the kdp command that answers it.

use std::io::Write;

use crate::exit;

/// `kdp explain`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Without NAME, lists every name with a one-line summary. Names are case-insensitive.

Examples:
  kdp explain ProducerFencedException
  kdp explain stuck-consumer
  kdp explain orphan
  kdp explain orphaned")]
pub struct Args {
    /// The exception, verdict or flag.
    #[arg(value_enum, ignore_case = true)]
    pub name: Option<Term>,
}

/// Everything `kdp explain` knows.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    #[value(name = "ProducerFencedException")]
    ProducerFenced,
    #[value(name = "InvalidProducerEpochException")]
    InvalidProducerEpoch,
    #[value(name = "OutOfOrderSequenceException")]
    OutOfOrderSequence,
    #[value(name = "UnknownProducerIdException")]
    UnknownProducerId,
    #[value(name = "TransactionAbortableException")]
    TransactionAbortable,
    /// A read_committed consumer that stops advancing (lag that does not shrink).
    #[value(name = "stuck-consumer", alias = "lso")]
    StuckConsumer,
    Hanging,
    Stuck,
    Unknown,
    Blocked,
    Fenced,
    OpenTooLong,
    Orphan,
    Idle,
    Orphaned,
    Lingering,
    Unattributed,
}

/// The summary, the meaning, and what to run.
struct Entry {
    summary: &'static str,
    meaning: &'static str,
    answer: &'static str,
}

impl Term {
    fn entry(self) -> Entry {
        match self {
            Term::ProducerFenced => Entry {
                summary: "another producer took over this transactional.id",
                meaning: "The coordinator has a newer epoch for the transactional.id: another instance \
called initTransactions() with the same id (or an operator fenced it, e.g. kdp force-terminate), \
so this instance is a zombie. It cannot send or commit again; close it. Two live instances with \
one transactional.id keep fencing each other.",
                answer: "kdp history --transactional-id ID    (who fenced whom, and when: each InitProducerId is a new instance)
kdp transactions describe --transactional-id ID    (the coordinator's producer id and epoch)
kdp describe --with-transactions --topic T    (flag fenced: a later instance took over after the partition's last writes)",
            },
            Term::InvalidProducerEpoch => Entry {
                summary: "the producer's epoch is older than the one the broker or coordinator holds",
                meaning: "The producer wrote with an epoch the partition or coordinator has moved past, most \
often because its transaction ran longer than transaction.timeout.ms and the coordinator aborted it \
and bumped the epoch. The producer can abort the transaction and carry on (it is abortable since \
Kafka 2.7, KIP-588).",
                answer: "kdp history --transactional-id ID    (a `timeout` abort by the coordinator, or a new instance)
kdp transactions describe --transactional-id ID    (TransactionTimeoutMs, the current epoch)
kdp describe --with-transactions --topic T    (flag open-too-long)",
            },
            Term::OutOfOrderSequence => Entry {
                summary: "a batch's sequence number is not the next one the partition expects",
                meaning: "The leader holds producer state (LastSequence) for this producer and the batch does \
not follow it: a batch was lost or expired in flight, or the leader's producer state differs from \
the one the producer wrote to (a leader change onto a replica that diverged, unclean election).",
                answer: "kdp describe --topic T --partition P    (LastSequence and epoch at the leader)
kdp batches --topic T --partition P --producer-id ID    (the producer's batches: gaps, repeats, \
duplicates and epochs going back, judged by the broker's rule)
kdp compare-replicas --topic T --partition P    (replicas whose producer state differs)",
            },
            Term::UnknownProducerId => Entry {
                summary: "the partition has no state for this producer id",
                meaning: "The broker no longer knows the producer on that partition: its records were removed \
by retention and its state expired (producer.id.expiration.ms after its last write). The producer \
resets its sequence, or with transactions bumps its epoch, and carries on.",
                answer: "kdp describe --topic T --partition P    (whether the producer is still in ActiveProducers)
kdp describe --with-transactions --topic T    (flag idle: silent for longer than producer.id.expiration.ms)",
            },
            Term::TransactionAbortable => Entry {
                summary: "the transaction must be aborted; the producer can then go on",
                meaning: "Kafka 3.8+ (KIP-890) reports errors a transactional producer recovers from by \
aborting the current transaction, e.g. a write the partition leader could not verify as part of an \
ongoing transaction. Abort, then start a new transaction.",
                answer: "kdp transactions describe --transactional-id ID    (the coordinator's state and partitions)
kdp find-hanging --topic T    (a transaction left open on a partition)",
            },
            Term::StuckConsumer => Entry {
                summary: "a read_committed consumer stops at the last stable offset (LSO)",
                meaning: "A read_committed consumer reads only up to the LSO, the first offset of the oldest \
open transaction on the partition. While that transaction stays open the LSO does not move and \
the consumer's lag grows although records arrive. A transaction no coordinator will end (hanging) \
or whose markers were never written (stuck) pins the LSO until an operator acts.",
                answer: "kdp find-hanging [--topic T]    (BlockedRecords: high watermark minus LSO)
kdp force-terminate --transactional-id ID    (when the id is known)
kdp abort --topic T --partition P --start-offset O    (when no coordinator knows it)",
            },
            Term::Hanging => Entry {
                summary: "find-hanging: an open transaction no coordinator will end",
                meaning: "A producer has a transaction open on the partition, has not written for longer than \
the maximum transaction timeout, and no coordinator lists a transactional id for it, the coordinator \
does not know the id, or the partition is not in the coordinator's transaction (Kafka's rule). It \
pins the LSO until aborted.",
                answer: "kdp find-hanging --repair    (force-terminate or abort, after a plan and a confirmation)",
            },
            Term::Stuck => Entry {
                summary: "find-hanging: the coordinator decided, but the markers were never written",
                meaning: "The coordinator is in PrepareCommit or PrepareAbort for longer than the timeout and the \
partition still has the transaction open (KAFKA-19999). Kafka's rule says 'not hanging' while the \
LSO stays pinned. The outcome is decided: only the coordinator may write it.",
                answer: "kdp find-hanging    (then move the coordinator: restart its broker, so the new one writes the markers)",
            },
            Term::Unknown => Entry {
                summary: "find-hanging: kdp cannot tell",
                meaning: "The caller may not describe the transactional id (ListTransactions hides such ids), or \
a broker did not answer. Never reported as hanging (Kafka's tool would) and never repaired; the exit \
status is 1.",
                answer: "kdp find-hanging -v    (run with DESCRIBE on the transactional ids, every broker reachable)",
            },
            Term::Blocked => Entry {
                summary: "BlockedRecords: the records read_committed consumers cannot read yet",
                meaning: "The partition's high watermark minus its last stable offset: what an open transaction \
holds back from read_committed consumers.",
                answer: "kdp find-hanging    (BlockedRecords per hanging or stuck transaction)",
            },
            Term::Fenced => Entry {
                summary: "describe --with-transactions: a later instance took over after the partition's last writes",
                meaning: "The transaction coordinator's own log (__transaction_state) shows, after the epoch \
of the partition's last writes, an InitProducerId (a new instance, or an admin fence) or the \
coordinator's abort (a timeout): the instance that wrote them is fenced. That holds under both \
transaction protocols; the JSON's Fenced.Source says `log`. Under protocol v1 an epoch older than \
the coordinator's proves it too (Source `epochs`), since only those events bump it; under v2 every \
transaction end bumps the epoch, so without the log (no READ on __transaction_state) kdp says the \
verdict is unknown rather than guess.",
                answer: "kdp describe --with-transactions --topic T
kdp history --transactional-id ID    (the instance changes, with their times)",
            },
            Term::OpenTooLong => Entry {
                summary: "describe --with-transactions: an open transaction older than its timeout",
                meaning: "The transaction has been open longer than its timeout (the coordinator's for the id, \
else the cluster's maximum): the coordinator should have aborted it.",
                answer: "kdp describe --with-transactions --topic T; kdp find-hanging --topic T",
            },
            Term::Orphan => Entry {
                summary: "describe --with-transactions: an open transaction the coordinator will not end",
                meaning: "No coordinator knows the producer, or its transaction does not include this partition \
while the coordinator has moved to another epoch or producer id: find-hanging calls it hanging.",
                answer: "kdp find-hanging --topic T --repair",
            },
            Term::Orphaned => Entry {
                summary: "owners: the id's instance is gone from its application's group",
                meaning: "A Kafka Streams process (its process id is in the id) or a Connect worker that wrote \
with this transactional id is no longer a member of its group, which is settled (Stable or Empty). \
Nothing of the application ends its open transaction: the survivors use their own ids. It blocks \
read_committed consumers of its partitions, the application's own output included, until the \
coordinator aborts it at start + transaction.timeout.ms, or until a force-terminate.",
                answer: "kdp owners --group APP    (the id, its partitions, and the force-terminate that ends it)",
            },
            Term::Lingering => Entry {
                summary: "owners: a Flink sink transaction a later checkpoint superseded",
                meaning: "Flink's KafkaSink names a transaction <prefix>-<subtask>-<checkpoint>. A later-started \
transaction of the same prefix and subtask committed while this one is still open: its job moved on \
(a restart that did not probe this id, FLINK-39218) and will never commit it. It blocks \
read_committed consumers until its timeout (an hour by default). The newest checkpoint's \
transaction is never called lingering: aborting it discards data Flink checkpointed.",
                answer: "kdp owners --prefix PREFIX-    (the lingering id and the force-terminate that ends it)",
            },
            Term::Unattributed => Entry {
                summary: "owners: no known framework scheme, or a shape without its evidence",
                meaning: "The id matches none of Kafka Streams', Kafka Connect's or Flink's schemes, or only a \
shape without what confirms it (a lone Flink-shaped id, a prefix with a counter as Spring's): kdp \
never names a framework by shape alone.",
                answer: "kdp owners --transactional-id ID    (the prefix and counter, when the id ends in digits)",
            },
            Term::Idle => Entry {
                summary: "describe --with-transactions: silent for longer than producer.id.expiration.ms",
                meaning: "The producer has not written to the partition for longer than the cluster's \
producer.id.expiration.ms: its state is about to expire, and its next write may fail with \
UnknownProducerIdException.",
                answer: "kdp describe --with-transactions --topic T",
            },
        }
    }
}

/// `kdp explain [NAME]`.
pub fn run(args: Args) -> i32 {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = match args.name {
        Some(t) => write_entry(&mut out, t),
        None => write_index(&mut out),
    };
    match written {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            fail!("cannot write output: {e}");
            exit::PARTIAL
        }
    }
}

fn name(t: Term) -> String {
    use clap::ValueEnum;
    t.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

fn write_entry(out: &mut dyn Write, t: Term) -> std::io::Result<()> {
    let e = t.entry();
    writeln!(out, "{}: {}\n", name(t), e.summary)?;
    writeln!(out, "{}\n", e.meaning)?;
    writeln!(out, "What kdp shows:")?;
    for line in e.answer.lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

fn write_index(out: &mut dyn Write) -> std::io::Result<()> {
    use clap::ValueEnum;
    for t in Term::value_variants() {
        writeln!(out, "{:<31} {}", name(*t), t.entry().summary)?;
    }
    writeln!(out, "\nkdp explain NAME says more.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_term_names_a_kdp_command() {
        for t in Term::value_variants() {
            let mut out = Vec::new();
            write_entry(&mut out, *t).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains("\n  kdp "), "{text}");
        }
        assert_eq!(
            Term::from_str("producerfencedexception", true),
            Ok(Term::ProducerFenced)
        );
        assert_eq!(Term::from_str("lso", true), Ok(Term::StuckConsumer));
    }
}
