//! FindCoordinator for group ids (key type 0): the [`CoordinatorLookup`]
//! the driver's coordinator strategy uses, on the one FindCoordinator
//! lookup of [`crate::txn::coordinator`]; and `at_coordinators`, the
//! shape every per-group request shares (OffsetFetch,
//! DescribeShareGroupOffsets, DescribeGroups and the other describes): each group asked of its coordinator.

use std::collections::BTreeMap;
use std::time::Duration;

use kdp_domain::key_error::KeyError;
use kdp_wire::messages::find_coordinator::KEY_TYPE_GROUP;

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, Coordinator, DriverOptions};
use crate::admin::{CoordinatorFuture, CoordinatorLookup};
use crate::bound::TimeBound;
use crate::client::{Client, SharedClient};

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

/// Drives `handler` over `groups`, each at its coordinator: `known` names
/// coordinators already known (group id to broker, e.g. the broker that
/// listed it), which are then not looked up. Each group's answer or why it
/// has none.
pub(crate) async fn at_coordinators<H>(
    client: &SharedClient,
    handler: &H,
    groups: Vec<String>,
    known: &BTreeMap<String, i32>,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> BTreeMap<String, Result<H::Value, KeyError>>
where
    H: AdminHandler<Key = String>,
{
    let mut results = Vec::new();
    // only the asked groups' coordinators: `known` may hold every listed group
    let asked = groups
        .iter()
        .filter_map(|g| known.get(g).map(|b| (g.clone(), *b)));
    drive(
        client,
        handler,
        &mut Coordinator::with_known(GroupCoordinators, asked),
        groups,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    results.into_iter().map(|(k, _, r)| (k, r)).collect()
}
