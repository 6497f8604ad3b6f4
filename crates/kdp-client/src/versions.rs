//! What a broker said in ApiVersions, and picking versions from it.

use std::collections::BTreeMap;

use kdp_wire::messages::ApiVersionsResponse;

/// The API ranges one broker supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersionsTable {
    ranges: BTreeMap<i16, (i16, i16)>,
    /// The ApiVersions version the broker finally answered.
    pub api_versions_version: i16,
    /// The finalized `transaction.version` feature level, if the broker
    /// sent its finalized features (Kafka 3.x sends none below level 1).
    pub transaction_version: Option<i16>,
}

impl ApiVersionsTable {
    /// The table of a broker's ApiVersions answer, given at `api_versions_version`.
    pub fn new(resp: &ApiVersionsResponse, api_versions_version: i16) -> Self {
        ApiVersionsTable {
            ranges: resp
                .api_keys
                .iter()
                .map(|a| (a.api_key, (a.min_version, a.max_version)))
                .collect(),
            api_versions_version,
            transaction_version: resp.finalized_level("transaction.version"),
        }
    }

    /// The broker's range for `api_key`, if it supports the API.
    pub fn range(&self, api_key: i16) -> Option<(i16, i16)> {
        self.ranges.get(&api_key).copied()
    }

    /// The newest version in both the broker's range and `client_min..=client_max`.
    pub fn pick(&self, api_key: i16, client_min: i16, client_max: i16) -> Option<i16> {
        let (min, max) = self.range(api_key)?;
        let hi = max.min(client_max);
        let lo = min.max(client_min);
        (lo <= hi).then_some(hi)
    }

    /// Every (api key, min, max) the broker listed.
    pub fn iter(&self) -> impl Iterator<Item = (i16, i16, i16)> + '_ {
        self.ranges.iter().map(|(k, (lo, hi))| (*k, *lo, *hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::messages::ApiVersion;

    #[test]
    fn picks_the_newest_common_version() {
        let resp = ApiVersionsResponse {
            api_keys: vec![
                ApiVersion::new(kdp_wire::api::METADATA, 0, 13),
                ApiVersion::new(kdp_wire::api::DESCRIBE_PRODUCERS, 0, 0),
            ],
            ..Default::default()
        };
        let t = ApiVersionsTable::new(&resp, 4);
        assert_eq!(t.pick(3, 4, 12), Some(12));
        assert_eq!(t.pick(3, 14, 15), None);
        assert_eq!(t.pick(61, 0, 0), Some(0));
        assert_eq!(t.pick(61, 1, 2), None);
        assert_eq!(t.pick(65, 0, 0), None);
        let old = ApiVersionsResponse {
            api_keys: vec![ApiVersion::new(kdp_wire::api::METADATA, 0, 7)],
            ..Default::default()
        };
        assert_eq!(ApiVersionsTable::new(&old, 2).pick(3, 4, 12), Some(7));
    }
}
