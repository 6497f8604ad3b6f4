//! One module per Kafka message.

pub mod describe_producers;

pub use describe_producers::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
