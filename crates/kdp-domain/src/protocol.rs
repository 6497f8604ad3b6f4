//! The transaction protocol generation a cluster runs (KIP-890): which
//! epoch comparisons prove anything depends on it.

/// The transaction protocol generation a cluster runs (KIP-890).
///
/// Under v1 a producer epoch changes only when an instance starts (and
/// fences the previous one); under v2 every transaction end bumps it too.
/// Which epoch comparisons prove anything depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TxnProtocol {
    /// `transaction.version` 0 or 1: epochs stay across transactions.
    V1,
    /// `transaction.version` 2: each commit or abort bumps the epoch.
    V2,
}

impl TxnProtocol {
    /// From the cluster's finalized `transaction.version` feature level
    /// (absent: 0).
    pub fn from_feature_level(level: i16) -> Self {
        if level >= 2 {
            TxnProtocol::V2
        } else {
            TxnProtocol::V1
        }
    }

    /// "v1" or "v2".
    pub fn label(self) -> &'static str {
        match self {
            TxnProtocol::V1 => "v1",
            TxnProtocol::V2 => "v2",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_two_and_above_is_v2() {
        assert_eq!(TxnProtocol::from_feature_level(0), TxnProtocol::V1);
        assert_eq!(TxnProtocol::from_feature_level(1), TxnProtocol::V1);
        assert_eq!(TxnProtocol::from_feature_level(2).label(), "v2");
    }
}
