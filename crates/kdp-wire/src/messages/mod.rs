//! One module per Kafka message.

pub mod api_versions;
pub mod describe_producers;
pub mod metadata;

pub use api_versions::{ApiVersion, ApiVersionsRequest, ApiVersionsResponse};
pub use describe_producers::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
pub use metadata::{
    MetadataRequest, MetadataRequestTopic, MetadataResponse, MetadataResponseBroker,
    MetadataResponsePartition, MetadataResponseTopic,
};
