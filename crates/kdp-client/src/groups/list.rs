//! ListGroups on every broker, merged: each broker lists the groups whose
//! `__consumer_offsets` partitions it leads, leaving out groups the caller
//! may not DESCRIBE. The state filter needs v4 (Kafka 2.6), the type filter
//! v5 (Kafka 3.8); a broker without it fails the call rather than listing
//! unfiltered.

use std::collections::BTreeMap;

use kdp_wire::messages::{ListGroupsRequest, ListGroupsResponse};

use crate::admin::driver::collect;
use crate::admin::{drive, AdminHandler, AllBrokers, DriverOptions, KeyOutcome};
use crate::bound::TimeBound;
use crate::client::SharedClient;
use crate::error::{Error, Result};
use kdp_domain::groups::state::{GroupState, GroupType};
use kdp_domain::key_error::KeyError;

/// What to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupFilters {
    /// States to keep (empty: all).
    pub states: Vec<GroupState>,
    /// Types to keep (empty: all).
    pub types: Vec<GroupType>,
}

/// One listed group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The group id.
    pub group_id: String,
    /// The protocol type (`consumer` for Kafka consumers), or empty.
    pub protocol_type: String,
    /// Its state; `None` from a broker below v4, which does not say.
    pub state: Option<GroupState>,
    /// Its type; `None` from a broker below v5.
    pub group_type: Option<GroupType>,
    /// The broker that listed it: its coordinator.
    pub coordinator: i32,
}

/// Every broker's groups, or why it has none.
pub type Listings = BTreeMap<i32, std::result::Result<Vec<Listed>, KeyError>>;

struct Handler<'a> {
    filters: &'a GroupFilters,
    /// Highest ListGroups version of each broker, to read the answer.
    versions: BTreeMap<i32, i16>,
}

impl AdminHandler for Handler<'_> {
    type Key = i32;
    type Value = Vec<Listed>;
    type Request = ListGroupsRequest;
    type Response = ListGroupsResponse;

    fn build_request(&self, _broker: i32, _keys: &[i32]) -> ListGroupsRequest {
        ListGroupsRequest {
            states_filter: self
                .filters
                .states
                .iter()
                .map(|s| s.name().to_string())
                .collect(),
            types_filter: self
                .filters
                .types
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
            ..Default::default()
        }
    }

    fn handle_response(
        &self,
        broker: i32,
        _keys: &[i32],
        resp: ListGroupsResponse,
    ) -> Vec<(i32, KeyOutcome<Vec<Listed>>)> {
        let version = self.versions.get(&broker).copied().unwrap_or(0);
        let outcome = KeyOutcome::from_code(resp.error_code, None, || {
            resp.groups
                .into_iter()
                .map(|g| Listed {
                    group_id: g.group_id,
                    protocol_type: g.protocol_type,
                    state: (version >= 4).then(|| GroupState::from_name(&g.group_state)),
                    group_type: (version >= 5).then(|| GroupType::from_name(&g.group_type)),
                    coordinator: broker,
                })
                .collect()
        });
        vec![(broker, outcome)]
    }
}

/// Lists groups on every broker.
pub async fn list_groups(
    client: &SharedClient,
    filters: &GroupFilters,
    opts: &DriverOptions,
    bound: &TimeBound,
) -> Result<Listings> {
    let brokers = bound
        .run(
            "Metadata",
            AllBrokers::keys_within(client, bound.request_timeout()),
        )
        .await?;
    let mut versions = BTreeMap::new();
    for &b in &brokers {
        let conn = bound.run("ApiVersions", client.broker(b)).await?;
        let have = conn.version_for::<ListGroupsRequest>()?;
        let needed = if !filters.types.is_empty() {
            Some(("group type filter", 5, "3.8"))
        } else if !filters.states.is_empty() {
            Some(("group state filter", 4, "2.6"))
        } else {
            None
        };
        if let Some((feature, needed, kafka)) = needed.filter(|n| have < n.1) {
            return Err(Error::FeatureUnsupported {
                broker: b,
                feature,
                api: "ListGroups",
                needed,
                kafka,
                broker_max: have,
            });
        }
        versions.insert(b, have);
    }
    let mut results = Vec::new();
    drive(
        client,
        &Handler { filters, versions },
        &mut AllBrokers::default(),
        brokers,
        opts,
        bound,
        collect(&mut results),
    )
    .await;
    Ok(results.into_iter().map(|(k, _, r)| (k, r)).collect())
}
