//! A group position's verdict: caught up, lagging, held back by an open
//! transaction, behind the log start, or unknown.

use crate::lag::position::{At, Position};
use crate::lag::tally::Records;
use crate::severity::Severity;

/// Where a group stands on a partition, in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LagVerdict {
    /// Nothing left for a read_committed consumer and nothing held back:
    /// whatever Kafka's offset lag says (markers, aborted records).
    CaughtUp,
    /// Records to deliver below the LSO (at least one, counted or bounded).
    Lagging,
    /// Nothing left below the LSO, but an open transaction holds offsets
    /// above it: the consumer waits for it.
    HeldBack,
    /// The committed offset is below the log start: records were lost
    /// (the consumer's `auto.offset.reset` decides where it goes on).
    BehindLogStart,
    /// Committed above the LSO: only a read_uncommitted consumer gets
    /// there.
    PastLso,
    /// No committed offset.
    NoOffset,
    /// Between 0 and some records: not read far enough to tell.
    MaybeLagging,
    /// The partition's bounds or the group's offset could not be read.
    Unknown,
}

impl LagVerdict {
    /// The verdict of a position and its records.
    pub fn of(position: Option<&Position>, records: Option<Records>) -> LagVerdict {
        let Some(pos) = position else {
            return LagVerdict::Unknown;
        };
        match pos.at() {
            At::Nothing => return LagVerdict::NoOffset,
            At::BeforeLogStart { .. } => return LagVerdict::BehindLogStart,
            At::PastLso => return LagVerdict::PastLso,
            At::BelowLso { .. } | At::Lso => {}
        }
        match records {
            None => LagVerdict::Unknown,
            Some(r) if r.at_least() > 0 => LagVerdict::Lagging,
            Some(r) if r.at_most() > 0 => LagVerdict::MaybeLagging,
            Some(_) if pos.bounds.held_back() > 0 => LagVerdict::HeldBack,
            Some(_) => LagVerdict::CaughtUp,
        }
    }

    /// The verdict of a read_uncommitted consumer's position: it reads up
    /// to the high watermark, so nothing holds it back and a committed
    /// offset above the LSO is no surprise; only one above the high
    /// watermark is past the end ([`LagVerdict::PastLso`]: past the LSO
    /// too).
    pub fn of_uncommitted(position: Option<&Position>, records: Option<Records>) -> LagVerdict {
        let Some(pos) = position else {
            return LagVerdict::Unknown;
        };
        match pos.at() {
            At::Nothing => return LagVerdict::NoOffset,
            At::BeforeLogStart { .. } => return LagVerdict::BehindLogStart,
            _ if pos.committed.is_some_and(|c| c > pos.bounds.high_watermark) => {
                return LagVerdict::PastLso
            }
            _ => {}
        }
        match records {
            None => LagVerdict::Unknown,
            Some(r) if r.at_least() > 0 => LagVerdict::Lagging,
            Some(r) if r.at_most() > 0 => LagVerdict::MaybeLagging,
            Some(_) => LagVerdict::CaughtUp,
        }
    }

    /// The verdict of a share group's position (its start offset) and the
    /// records it still has to deliver: lagging when at least one is sure
    /// (a lower bound from Kafka's own Lag), maybe lagging while only the
    /// upper bound is above 0. `held_back`: offsets above the LSO a
    /// read_committed share group waits for.
    pub fn of_share(
        position: Option<&Position>,
        records: Option<Records>,
        held_back: Option<i64>,
    ) -> LagVerdict {
        let Some(pos) = position else {
            return LagVerdict::Unknown;
        };
        if pos.committed.is_none() {
            return LagVerdict::NoOffset;
        }
        match records {
            None => LagVerdict::Unknown,
            Some(r) if r.at_least() > 0 => LagVerdict::Lagging,
            Some(r) if r.at_most() > 0 => LagVerdict::MaybeLagging,
            Some(_) if held_back.is_some_and(|h| h > 0) => LagVerdict::HeldBack,
            Some(_) => LagVerdict::CaughtUp,
        }
    }

    /// The verdict's name as kdp prints it.
    pub fn label(&self) -> &'static str {
        match self {
            LagVerdict::CaughtUp => "caught up",
            LagVerdict::Lagging => "lagging",
            LagVerdict::HeldBack => "held back",
            LagVerdict::BehindLogStart => "behind log start",
            LagVerdict::PastLso => "past the LSO",
            LagVerdict::NoOffset => "no offset",
            LagVerdict::MaybeLagging => "maybe lagging",
            LagVerdict::Unknown => "unknown",
        }
    }

    /// The verdict's JSON name.
    pub fn key(&self) -> &'static str {
        match self {
            LagVerdict::CaughtUp => "caught_up",
            LagVerdict::Lagging => "lagging",
            LagVerdict::HeldBack => "held_back",
            LagVerdict::BehindLogStart => "behind_log_start",
            LagVerdict::PastLso => "past_lso",
            LagVerdict::NoOffset => "no_offset",
            LagVerdict::MaybeLagging => "maybe_lagging",
            LagVerdict::Unknown => "unknown",
        }
    }

    /// Caught up (or nothing committed) is fine; lagging, held back and
    /// past the LSO are worth a look; records lost below the log start
    /// need action; not read far enough or not read is unknown.
    pub fn severity(&self) -> Severity {
        match self {
            LagVerdict::CaughtUp | LagVerdict::NoOffset => Severity::Ok,
            LagVerdict::Lagging | LagVerdict::HeldBack | LagVerdict::PastLso => Severity::Warning,
            LagVerdict::BehindLogStart => Severity::Problem,
            LagVerdict::MaybeLagging | LagVerdict::Unknown => Severity::Unknown,
        }
    }

    /// Every verdict, for documentation and tests.
    pub const ALL: [LagVerdict; 8] = [
        LagVerdict::CaughtUp,
        LagVerdict::Lagging,
        LagVerdict::HeldBack,
        LagVerdict::BehindLogStart,
        LagVerdict::PastLso,
        LagVerdict::NoOffset,
        LagVerdict::MaybeLagging,
        LagVerdict::Unknown,
    ];
}
