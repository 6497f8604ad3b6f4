//! Consumer groups across a cluster, one module per Kafka API, each one
//! user of the [admin driver](crate::admin::driver):
//!
//! - [`list`]: ListGroups on every broker, merged.
//! - [`coordinator`]: FindCoordinator for group ids (key type 0, batched
//!   from v4).
//! - [`offsets`]: OffsetFetch, batched per coordinator (many groups per
//!   request from v8, Kafka 3.0).
//! - [`describe`]: DescribeGroups and ConsumerGroupDescribe, for members.
//! - [`share_offsets`]: DescribeShareGroupOffsets, share groups' start
//!   offsets, batched per coordinator.
//!
//! A group's state and type, its committed offsets and what a read of every
//! group found are [`kdp_domain::groups`]'; reading them all at once is
//! kdp-workflows' (`groups`).

pub mod coordinator;
pub mod describe;
pub mod list;
pub mod offsets;
pub mod share_offsets;

pub use coordinator::GroupCoordinators;
pub use describe::{
    describe_groups, describe_groups_at, describe_members_at, Description, Descriptions,
    MemberDescriptions,
};
pub use list::{list_groups, GroupFilters, Listed, Listings};
pub use offsets::{committed_offsets, committed_offsets_at};
pub use share_offsets::share_offsets_at;
