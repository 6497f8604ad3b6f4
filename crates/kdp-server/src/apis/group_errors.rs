//! What every group API checks first, in Kafka's order: DESCRIBE on the
//! group (GROUP_AUTHORIZATION_FAILED), then whether this broker is its
//! coordinator (NOT_COORDINATOR, which clients answer by finding the
//! coordinator again; COORDINATOR_NOT_AVAILABLE without one).

use kdp_wire::ErrorCode;

use super::handler::Caller;
use crate::cluster::Cluster;

/// The error a group request gets before its group is looked at, if any.
pub fn group_precheck(cluster: &Cluster, caller: &Caller<'_>, group_id: &str) -> Option<ErrorCode> {
    if !caller.may_describe_group(cluster, group_id) {
        return Some(ErrorCode::GROUP_AUTHORIZATION_FAILED);
    }
    match cluster.group_coordinator(group_id) {
        Some(b) if b == caller.broker_id => None,
        Some(_) => Some(ErrorCode::NOT_COORDINATOR),
        None => Some(ErrorCode::COORDINATOR_NOT_AVAILABLE),
    }
}
