//! FindCoordinator for group ids (key type 0): the [`CoordinatorLookup`]
//! the driver's coordinator strategy uses, on the one FindCoordinator
//! lookup of [`crate::txn::coordinator`].

use std::time::Duration;

use kdp_wire::messages::find_coordinator::KEY_TYPE_GROUP;

use crate::admin::{CoordinatorFuture, CoordinatorLookup};
use crate::client::Client;

/// Finds group coordinators, asking the lowest broker id the client knows.
#[derive(Debug, Default, Clone, Copy)]
pub struct GroupCoordinators;

impl CoordinatorLookup<String> for GroupCoordinators {
    fn find<'a>(
        &'a self,
        client: &'a Client,
        keys: &'a [String],
        timeout: Duration,
    ) -> CoordinatorFuture<'a, String> {
        Box::pin(crate::txn::coordinator::find(
            client,
            KEY_TYPE_GROUP,
            keys,
            timeout,
        ))
    }
}
