//! One module per Kafka API, each a declaration (see `kdp-derive`): every
//! struct `Name` comes with its view `NameView<'a>` (see [`crate::view`]),
//! re-exported here for the responses read in bulk.

pub mod api_versions;
pub mod consumer_group_describe;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_producers;
mod describe_producers_fast;
pub mod describe_share_group_offsets;
pub mod describe_transactions;
pub mod fetch;
pub mod find_coordinator;
pub mod init_producer_id;
pub mod list_groups;
pub mod list_offsets;
pub mod list_transactions;
pub mod metadata;
pub mod offset_fetch;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod streams_group_describe;
pub mod write_txn_markers;

pub use api_versions::{ApiVersion, ApiVersionsRequest, ApiVersionsResponse};
pub use consumer_group_describe::{
    Assignment, ConsumerDescribedGroup, ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse, ConsumerGroupMember, TopicPartitions,
};
pub use describe_configs::{
    DescribeConfigsRequest, DescribeConfigsResource, DescribeConfigsResourceResult,
    DescribeConfigsResponse, DescribeConfigsResult, DescribeConfigsSynonym,
};
pub use describe_groups::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribedGroup, DescribedGroupMember,
};
pub use describe_producers::{
    DescribeProducersRequest, DescribeProducersResponse, DescribeProducersResponseView,
    PartitionResponse, PartitionResponseView, ProducerState, ProducerStateView, TopicRequest,
    TopicResponse, TopicResponseView,
};
pub use describe_share_group_offsets::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsRequestTopic, DescribeShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponseGroup, DescribeShareGroupOffsetsResponsePartition,
    DescribeShareGroupOffsetsResponseTopic,
};
pub use describe_transactions::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, DescribeTransactionsResponseView,
    TopicData, TopicDataView, TransactionState, TransactionStateView,
};
pub use fetch::{
    AbortedTransaction, FetchPartition, FetchPartitionData, FetchRequest, FetchResponse,
    FetchTopic, FetchableTopicResponse, ForgottenTopic, READ_COMMITTED, READ_UNCOMMITTED,
};
pub use find_coordinator::{Coordinator, FindCoordinatorRequest, FindCoordinatorResponse};
pub use init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
pub use list_groups::{ListGroupsRequest, ListGroupsResponse, ListedGroup};
pub use list_offsets::{
    ListOffsetsPartition, ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse,
    ListOffsetsTopic, ListOffsetsTopicResponse,
};
pub use list_transactions::{
    ListTransactionsRequest, ListTransactionsResponse, ListTransactionsResponseView,
    ListedTransaction, ListedTransactionView,
};
pub use metadata::{
    MetadataRequest, MetadataRequestTopic, MetadataResponse, MetadataResponseBroker,
    MetadataResponsePartition, MetadataResponseTopic,
};
pub use offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
    OffsetFetchResponse, OffsetFetchResponseGroup, OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions, OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
pub use sasl_authenticate::{SaslAuthenticateRequest, SaslAuthenticateResponse};
pub use sasl_handshake::{SaslHandshakeRequest, SaslHandshakeResponse};
pub use streams_group_describe::{
    StreamsAssignment, StreamsDescribedGroup, StreamsEndpoint, StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse, StreamsGroupMember, StreamsKeyValue, StreamsSubtopology,
    StreamsTaskIds, StreamsTaskOffset, StreamsTopicInfo, StreamsTopology,
};
pub use write_txn_markers::{
    WritableTxnMarker, WritableTxnMarkerPartitionResult, WritableTxnMarkerResult,
    WritableTxnMarkerTopic, WritableTxnMarkerTopicResult, WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
};
