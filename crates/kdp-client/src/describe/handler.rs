//! DescribeProducers' rules, after Kafka's DescribeProducersHandler: which
//! partition errors are retried after a refresh, which are the answer.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kdp_domain::partition::{PartitionError, TopicPartition};
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponseView, TopicRequest,
};
use kdp_wire::view::Validated;
use kdp_wire::ErrorCode;

use crate::admin::{AdminHandler, KeyOutcome};

/// A validated DescribeProducers response, shared by the partitions it
/// answered: a value that reads through the view keeps the frame, not a
/// copy of its producers.
pub type Frame = Arc<Validated<DescribeProducersResponse>>;

/// How a partition's answer becomes the value reported for it.
pub(crate) type Read<V> = fn(&Frame, PartitionResponseView<'_>) -> V;

/// The frame itself: the caller reads the partition through the view.
pub(crate) fn framed(frame: &Frame, _: PartitionResponseView<'_>) -> Frame {
    frame.clone()
}

/// DescribeProducers' rules, after Kafka's DescribeProducersHandler; each
/// answered partition's value made by `read`.
pub(crate) struct Handler<V = Frame> {
    pub(crate) chosen_broker: Option<i32>,
    pub(crate) explicit: BTreeSet<TopicPartition>,
    pub(crate) read: Read<V>,
}

impl<V> Handler<V> {
    /// The chosen broker is named in its own absence from metadata.
    pub(crate) fn chosen_for(&self, result: &Result<V, PartitionError>) -> Option<i32> {
        match result {
            Err(e) if e.client_side && e.code == ErrorCode::BROKER_NOT_AVAILABLE => {
                self.chosen_broker
            }
            _ => None,
        }
    }
}

impl<V> AdminHandler for Handler<V> {
    type Key = TopicPartition;
    type Value = V;
    type Request = DescribeProducersRequest;
    type Response = Validated<DescribeProducersResponse>;

    fn build_request(&self, _broker: i32, keys: &[TopicPartition]) -> DescribeProducersRequest {
        build_request(keys)
    }

    /// Read through the view: the response is validated once, and each
    /// answered partition's value is what `read` makes of its view.
    fn handle_response(
        &self,
        _broker: i32,
        _keys: &[TopicPartition],
        resp: Validated<DescribeProducersResponse>,
    ) -> Vec<(TopicPartition, KeyOutcome<V>)> {
        let frame = Arc::new(resp);
        let mut out = Vec::new();
        for t in frame.view().topics() {
            for p in t.partitions() {
                let code = p.error_code();
                let retry = (code == ErrorCode::NOT_LEADER_OR_FOLLOWER
                    && self.chosen_broker.is_none())
                    || code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION;
                let message = || p.error_message().map(str::to_owned);
                let outcome = if retry {
                    KeyOutcome::Retry {
                        reason: PartitionError::broker(code, message()),
                        refresh: true,
                    }
                } else if code == ErrorCode::NONE {
                    KeyOutcome::Done((self.read)(&frame, p))
                } else {
                    KeyOutcome::Failed(PartitionError::broker(code, message()))
                };
                out.push(((t.name().to_owned(), p.partition_index()), outcome));
            }
        }
        out
    }

    /// Picked as part of a topic or the cluster and deleted since: nothing
    /// to report. Named explicitly: the metadata's error is the answer.
    fn missing(&self, key: &TopicPartition, error: PartitionError) -> KeyOutcome<V> {
        if error.code == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION && !self.explicit.contains(key) {
            tracing::debug!(topic = %key.0, partition = key.1, "partition deleted during the scan");
            return KeyOutcome::Dropped;
        }
        KeyOutcome::Failed(error)
    }
}

fn build_request(partitions: &[TopicPartition]) -> DescribeProducersRequest {
    let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        by_topic.entry(t.as_str()).or_default().push(*p);
    }
    DescribeProducersRequest {
        topics: by_topic
            .into_iter()
            .map(|(name, partition_indexes)| TopicRequest {
                name: name.to_string(),
                partition_indexes,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::lookup::missing_partition;

    #[test]
    fn requests_group_partitions_by_topic() {
        let req = build_request(&[("b".into(), 1), ("a".into(), 2), ("b".into(), 0)]);
        let names: Vec<_> = req
            .topics
            .iter()
            .map(|t| (t.name.as_str(), t.partition_indexes.clone()))
            .collect();
        assert_eq!(names, vec![("a", vec![2]), ("b", vec![1, 0])]);
    }

    #[test]
    fn missing_partition_message() {
        let e = missing_partition("t", 7, 3);
        assert_eq!(e.code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
        assert_eq!(e.name(), "UNKNOWN_TOPIC_OR_PARTITION");
        assert!(e.message.unwrap().contains("has 3 partitions (0-2)"));
    }
}
