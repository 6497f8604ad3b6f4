//! Consumer groups as the diagnosis reads them: state and type typed from
//! Kafka's names ([`state`]), committed offsets ([`offsets`]), share
//! groups' start offsets ([`share`]), and what one
//! read of the cluster's groups found ([`read`]). Reading them over the
//! wire is kdp-client's (one handler per API) and kdp-workflows'.

pub mod offsets;
pub mod read;
pub mod share;
pub mod state;

pub use offsets::{advice, Committed, GroupOffsets};
pub use read::{visibility, GroupAnswer, GroupsRead, Visibility};
pub use share::{Isolation, ShareOffsets, ShareRead, ShareStart};
pub use state::{GroupState, GroupType};
