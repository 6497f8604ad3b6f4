//! DescribeProducers across a cluster, as one user of the [admin
//! driver](crate::admin::driver).
//!
//! The selection is resolved against metadata into partitions; the driver
//! routes them (each partition's leader, or one broker given by id: a
//! follower answers from its own producer state), sends one request per
//! broker (split into chunks of at most `max_partitions_per_request`), brokers
//! in parallel with bounded concurrency, and results go to a sink as each
//! response arrives, so a caller can stream them.
//!
//! Retries follow Kafka's Admin client (DescribeProducersHandler): after a
//! metadata refresh, NOT_LEADER_OR_FOLLOWER is retried (unless a broker id was
//! given: then it is the answer) and so is UNKNOWN_TOPIC_OR_PARTITION; every
//! other partition error, authorization errors included, is the answer. A
//! broker that cannot be reached or stops answering gets its partitions
//! re-routed after a metadata refresh (or, with a broker id, reported with a
//! client-side NETWORK_EXCEPTION / REQUEST_TIMED_OUT). Unlike the Admin
//! client, a topic or partition that metadata says does not exist is reported
//! as UNKNOWN_TOPIC_OR_PARTITION instead of being retried until the timeout.
//! Retries follow the caller's [`TimeBound`](crate::bound::TimeBound): they back off exponentially
//! and are bounded in number and by its deadline, so nothing waits past it;
//! one request waits at most
//! [`TimeBound::request_timeout`](crate::bound::TimeBound::request_timeout) (a third of the
//! budget at most), so a broker that stops answering has its partitions
//! re-routed in time.
//!
//! - [`options`]: what to select and how to batch ([`DescribeOptions`]),
//!   and what the sink hears ([`DescribeEvent`]).
//! - [`run`]: [`describe_producers`] (owned producers) and
//!   [`describe_producers_framed`] (each answer read through the
//!   response's view with [`answers`]), and the resolution and per-broker
//!   describe the every-replica scans use ([`resolve`], [`describe_on`],
//!   and [`describe_on_framed`] whose answers are read through the
//!   response's view with [`each_answer`]),
//!   and the leaders' describe of partitions already resolved
//!   ([`describe_leaders`]).

mod handler;
pub mod options;
mod report;
pub mod run;
mod select;

pub use handler::Frame;
pub use options::{DescribeEvent, DescribeOptions, FramedEvent, FramedOutcome, TopicSelection};
pub use run::{
    answers, describe_leaders, describe_on, describe_on_framed, describe_producers,
    describe_producers_framed, each_answer, resolve, to_outcomes, Answer, Resolved,
};
