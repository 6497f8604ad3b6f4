//! What a describe selects and how it batches, and what its sink hears.

use std::collections::{BTreeMap, BTreeSet};

use kdp_domain::partition::{PartitionError, PartitionOutcome, TopicPartition};

use crate::admin::DriverOptions;

use crate::describe::handler::Frame;

/// Some partitions of one topic, or all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSelection {
    /// The topic name.
    pub name: String,
    /// `None`: every partition of the topic.
    pub partitions: Option<Vec<i32>>,
}

impl TopicSelection {
    /// Exactly these partitions, grouped by topic: topics by name,
    /// partitions ascending, each once.
    pub fn of_partitions(partitions: impl IntoIterator<Item = (String, i32)>) -> Vec<Self> {
        let mut by_topic: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for (topic, partition) in partitions {
            by_topic.entry(topic).or_default().insert(partition);
        }
        by_topic
            .into_iter()
            .map(|(name, partitions)| TopicSelection {
                name,
                partitions: Some(partitions.into_iter().collect()),
            })
            .collect()
    }
}

/// What to describe, where, and how to batch. Time is the caller's
/// [`TimeBound`](crate::bound::TimeBound), not an option.
#[derive(Debug, Clone)]
pub struct DescribeOptions {
    /// `None`: every partition of every topic, internal topics included.
    pub topics: Option<Vec<TopicSelection>>,
    /// Ask this broker instead of each partition's leader. Partitions picked
    /// implicitly (a whole topic, the whole cluster) are then only those with
    /// a replica on it; partitions named explicitly are all asked.
    pub broker_id: Option<i32>,
    /// Partitions in one DescribeProducers request at most; more are split.
    pub max_partitions_per_request: usize,
    /// Brokers asked at once at most.
    pub max_concurrent_brokers: usize,
    /// How many metadata lookups may say a topic does not exist before it is
    /// reported as unknown (a topic just created may not be known everywhere yet).
    pub unknown_topic_attempts: u32,
}

impl DescribeOptions {
    /// The admin driver's batching these options give (the requests after
    /// a describe batch the same way).
    pub fn driver_options(&self) -> DriverOptions {
        DriverOptions {
            max_keys_per_request: self.max_partitions_per_request,
            max_concurrent_brokers: self.max_concurrent_brokers,
        }
    }
}

impl Default for DescribeOptions {
    fn default() -> Self {
        DescribeOptions {
            topics: None,
            broker_id: None,
            max_partitions_per_request: 10_000,
            max_concurrent_brokers: 8,
            unknown_topic_attempts: 2,
        }
    }
}

/// What the sink receives, in order.
#[derive(Debug, Clone)]
pub enum DescribeEvent {
    /// This many more partitions will be reported (sent once after the first
    /// metadata lookup, again if a topic resolves later).
    Planned {
        /// Partitions added to the plan.
        partitions: usize,
    },
    /// Final answers for some partitions: one broker response, or errors
    /// settled without a broker (`broker_id: None`).
    Results {
        /// The broker that answered; `None` for errors settled without one.
        broker_id: Option<i32>,
        /// The response's `ThrottleTimeMs` (0 without a broker).
        throttle_time_ms: i32,
        /// One outcome per partition answered.
        outcomes: Vec<PartitionOutcome>,
    },
}

/// What the sink of a describe read through the view
/// ([`describe_producers_framed`](crate::describe::describe_producers_framed))
/// receives, in order: [`DescribeEvent`] with each answer left in its
/// validated response.
#[derive(Clone)]
pub enum FramedEvent {
    /// As [`DescribeEvent::Planned`].
    Planned {
        /// Partitions added to the plan.
        partitions: usize,
    },
    /// As [`DescribeEvent::Results`], the outcomes sorted by partition;
    /// their producers are read with
    /// [`answers`](crate::describe::answers).
    Results {
        /// The broker that answered; `None` for errors settled without one.
        broker_id: Option<i32>,
        /// The response's `ThrottleTimeMs` (0 without a broker).
        throttle_time_ms: i32,
        /// One outcome per partition answered.
        outcomes: Vec<FramedOutcome>,
    },
}

/// A partition's final answer from [`describe_on_framed`](crate::describe::describe_on_framed) or
/// [`describe_producers_framed`](crate::describe::describe_producers_framed): the response it came in, read through
/// its view ([`each_answer`](crate::describe::each_answer), [`answers`](crate::describe::answers)), or why there is none.
#[derive(Clone)]
pub struct FramedOutcome {
    /// The broker that answered (the chosen one where none could be asked).
    pub broker_id: Option<i32>,
    /// The partition.
    pub partition: TopicPartition,
    /// The response that answered for it.
    pub result: std::result::Result<Frame, PartitionError>,
}
