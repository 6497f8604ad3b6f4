//! A group's committed offsets as OffsetFetch gives them, typed: an offset,
//! none, or the partition's error; and what to grant when they are refused.

use std::collections::BTreeMap;

use kdp_wire::ErrorCode;

use crate::partition::TopicPartition;

/// One partition's committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// The committed offset: the next record the group reads.
    At(i64),
    /// The coordinator holds none (-1).
    Nothing,
    /// The partition's error, e.g. TOPIC_AUTHORIZATION_FAILED or
    /// UNSTABLE_OFFSET_COMMIT.
    Failed(ErrorCode),
}

impl Committed {
    /// A partition of an OffsetFetch answer: its `CommittedOffset` and
    /// `ErrorCode`.
    pub fn of(offset: i64, code: ErrorCode) -> Committed {
        if code != ErrorCode::NONE {
            Committed::Failed(code)
        } else if offset < 0 {
            Committed::Nothing
        } else {
            Committed::At(offset)
        }
    }
}

/// One group's committed offsets, by partition.
pub type GroupOffsets = BTreeMap<TopicPartition, Committed>;

/// What to grant when a group's (or one partition's) committed offsets were
/// refused, when there is something to grant.
pub fn advice(code: ErrorCode) -> Option<&'static str> {
    Some(match code {
        ErrorCode::GROUP_AUTHORIZATION_FAILED => {
            "OffsetFetch needs DESCRIBE on the group: grant it to this principal (kafka-acls.sh \
             --add --allow-principal <principal> --operation Describe --group <group>); without \
             it ListGroups also leaves the group out of a whole-cluster scan"
        }
        ErrorCode::TOPIC_AUTHORIZATION_FAILED => {
            "OffsetFetch needs DESCRIBE on the topic: grant it to this principal (kafka-acls.sh \
             --add --allow-principal <principal> --operation Describe --topic <topic>)"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_none_or_the_partitions_error() {
        assert_eq!(Committed::of(40, ErrorCode::NONE), Committed::At(40));
        assert_eq!(Committed::of(-1, ErrorCode::NONE), Committed::Nothing);
        assert_eq!(
            Committed::of(40, ErrorCode::UNSTABLE_OFFSET_COMMIT),
            Committed::Failed(ErrorCode::UNSTABLE_OFFSET_COMMIT)
        );
    }

    #[test]
    fn a_refused_group_names_the_acl_it_needs() {
        let hint = advice(ErrorCode::GROUP_AUTHORIZATION_FAILED).unwrap();
        assert!(hint.contains("--operation Describe --group"), "{hint}");
        let hint = advice(ErrorCode::TOPIC_AUTHORIZATION_FAILED).unwrap();
        assert!(hint.contains("--operation Describe --topic"), "{hint}");
        assert_eq!(advice(ErrorCode::NOT_COORDINATOR), None);
    }
}
