//! Who writes each transactional id, and whether it is still there
//! (docs/OWNERS.md): the frameworks' id schemes ([`scheme`]), what group
//! members' protocol bytes say of their owner ([`members`]), the read
//! `kdp owners` judges ([`input`]), each id attributed and judged
//! ([`mod@attribute`], [`verdict`]), two Flink jobs on one prefix
//! ([`collide`]) and the per-application summary ([`rollup`]).
//!
//! Never guessed: an id whose scheme matched but whose group could not be
//! read (an error, an ACL, a rebalance) is [`Verdict::Unknown`]; an id of
//! no scheme, or of a shape without the evidence that confirms it, is
//! [`Verdict::Unattributed`], never a framework picked by shape.

pub mod attribute;
pub mod collide;
pub mod input;
pub mod members;
pub mod rollup;
pub mod scheme;
pub mod verdict;

pub use attribute::{attribute, Advice, Attribution, Framework, Owner, Task, TxnFacts};
pub use collide::Collision;
pub use input::{GroupMembers, GroupProtocol, GroupSeen, Member, OwnersInput, TxnEntry};
pub use rollup::{applications, Application};
pub use verdict::{Evidence, Verdict};

/// One judged read: every id and every application.
#[derive(Debug, Clone)]
pub struct Owners {
    /// Each id, attributed and judged.
    pub owners: Vec<Owner>,
    /// Each attributed application.
    pub applications: Vec<Application>,
    /// Whether every broker answered ListTransactions.
    pub listing_complete: bool,
}

impl Owners {
    /// Attributes, judges and sums up `input`.
    pub fn judge(input: &OwnersInput) -> Owners {
        let owners = attribute(input);
        let applications = applications(input, &owners);
        Owners {
            owners,
            applications,
            listing_complete: input.listing_complete,
        }
    }

    /// Whether the answer is decided: every broker listed its
    /// transactions, every id was described, and no open transaction's
    /// verdict is unknown (`kdp owners` exits 1 otherwise).
    pub fn decided(&self) -> bool {
        self.listing_complete
            && self
                .owners
                .iter()
                .all(|o| o.txn.is_ok() && !(o.is_open() && o.verdict == Verdict::Unknown))
    }
}
