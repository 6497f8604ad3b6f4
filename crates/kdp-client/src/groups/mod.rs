//! Consumer groups across a cluster, each API one user of the [admin
//! driver](crate::admin::driver):
//!
//! - [`state`]: a group's state and type, typed from Kafka's names.
//! - [`list`]: ListGroups on every broker, merged.
//! - [`coordinator`]: FindCoordinator for group ids (key type 0, batched
//!   from v4).
//! - [`offsets`]: OffsetFetch, batched per coordinator (many groups per
//!   request from v8, Kafka 3.0).
//! - [`describe`]: DescribeGroups and ConsumerGroupDescribe, for members.
//! - [`read`]: all together, each group with its state, members and offsets.

pub mod coordinator;
pub mod describe;
pub mod list;
pub mod offsets;
pub mod read;
pub mod state;

pub use coordinator::GroupCoordinators;
pub use describe::{describe_groups, describe_groups_at, Description, Descriptions};
pub use list::{list_groups, GroupFilters, Listed, Listings};
pub use offsets::{advice, committed_offsets, committed_offsets_at, Committed, GroupOffsets};
pub use read::{read_groups, GroupAnswer, GroupsRead, ReadOptions, Visibility};
pub use state::{GroupState, GroupType};
