//! The cluster's transaction protocol generation, from the finalized
//! `transaction.version` feature each broker reports in ApiVersions.

use crate::client::SharedClient;
use crate::error::Result;
use kdp_domain::protocol::TxnProtocol;

/// The generation brokers report: v2 only if a broker reports
/// `transaction.version` 2 or more (the level is cluster-wide; a broker
/// that reports no finalized features runs v1).
pub async fn transaction_protocol(client: &SharedClient) -> Result<TxnProtocol> {
    let mut brokers: Vec<i32> = client.brokers().keys().copied().collect();
    if brokers.is_empty() {
        brokers = crate::admin::AllBrokers::keys(client).await?;
    }
    let mut level = 0;
    for id in brokers.into_iter().take(1) {
        let conn = client.broker(id).await?;
        if let Some(table) = conn.api_versions() {
            level = level.max(table.transaction_version.unwrap_or(0));
        }
    }
    Ok(TxnProtocol::from_feature_level(level))
}
