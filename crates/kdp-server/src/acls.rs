//! The cluster file's ACLs: what the (single) client principal may do.
//! Everything not listed is allowed, as for a principal with broad ALLOW
//! ACLs; a DENY wins over any ALLOW in Kafka's authorizer, so listing an
//! operation here is enough to model a missing permission. DESCRIBE on
//! transactional ids can also be given as an allow-list, the usual shape of
//! a non-admin principal's ACLs (ALLOW on some prefixes, nothing else).

/// One resource name pattern: a literal name, a prefix (`"secret-*"`,
/// Kafka's PREFIXED pattern type) or `"*"` (every name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamePattern {
    /// A LITERAL pattern: exactly this name.
    Literal(String),
    /// A PREFIXED pattern: every name starting with this (the `*` dropped).
    Prefix(String),
    /// The wildcard `*`: every name of the resource type.
    Any,
}

impl NamePattern {
    /// Reads a pattern as the cluster file writes it; `*` is allowed only alone or last.
    pub fn parse(s: &str) -> Result<NamePattern, String> {
        if s.is_empty() {
            return Err("an empty pattern matches nothing".into());
        }
        if s == "*" {
            return Ok(NamePattern::Any);
        }
        let (body, prefix) = match s.strip_suffix('*') {
            Some(b) => (b, true),
            None => (s, false),
        };
        if body.contains('*') {
            return Err(format!(
                "{s:?}: '*' is allowed only at the end (a prefix) or alone"
            ));
        }
        Ok(if prefix {
            NamePattern::Prefix(body.to_string())
        } else {
            NamePattern::Literal(body.to_string())
        })
    }

    /// Whether a resource named `name` falls under this pattern.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Literal(l) => l == name,
            NamePattern::Prefix(p) => name.starts_with(p.as_str()),
            NamePattern::Any => true,
        }
    }
}

/// Operations on a transactional id that the file can deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnIdOperation {
    /// FindCoordinator, ListTransactions, DescribeTransactions.
    Describe,
    /// InitProducerId (and a producer's transactional writes).
    Write,
}

/// Operations on the cluster resource that the file can deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterOperation {
    /// ALTER on the cluster: one of the two that allow WriteTxnMarkers.
    Alter,
    /// CLUSTER_ACTION on the cluster: the inter-broker permission WriteTxnMarkers also accepts.
    ClusterAction,
    /// DESCRIBE_CONFIGS on the cluster: needed to DescribeConfigs a BROKER resource.
    DescribeConfigs,
}

impl ClusterOperation {
    /// Reads the file's Kafka name (`ALTER`, `CLUSTER_ACTION`, `DESCRIBE_CONFIGS`); `None` for any other.
    pub fn parse(s: &str) -> Option<ClusterOperation> {
        match s {
            "ALTER" => Some(ClusterOperation::Alter),
            "CLUSTER_ACTION" => Some(ClusterOperation::ClusterAction),
            "DESCRIBE_CONFIGS" => Some(ClusterOperation::DescribeConfigs),
            _ => None,
        }
    }
}

/// What the file denies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acls {
    /// Transactional ids on which DESCRIBE is denied (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, or left out of listings).
    pub transactional_id_describe_deny: Vec<NamePattern>,
    /// If set, the only transactional ids on which DESCRIBE is allowed (ALLOW
    /// ACLs without a wildcard); ids matching none are denied.
    pub transactional_id_describe_allow: Option<Vec<NamePattern>>,
    /// Transactional ids on which WRITE is denied, so InitProducerId fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    pub transactional_id_write_deny: Vec<NamePattern>,
    /// Operations denied on the cluster resource (CLUSTER_AUTHORIZATION_FAILED).
    pub cluster_deny: Vec<ClusterOperation>,
}

impl Acls {
    /// Whether `op` on transactional id `id` is allowed: no DENY pattern for
    /// `op` matches it, and for DESCRIBE an allow-list, if given, does.
    pub fn allows_transactional_id(&self, op: TxnIdOperation, id: &str) -> bool {
        let deny = match op {
            TxnIdOperation::Describe => &self.transactional_id_describe_deny,
            TxnIdOperation::Write => &self.transactional_id_write_deny,
        };
        let allowed = match (op, &self.transactional_id_describe_allow) {
            (TxnIdOperation::Describe, Some(allow)) => allow.iter().any(|p| p.matches(id)),
            _ => true,
        };
        allowed && !deny.iter().any(|p| p.matches(id))
    }

    /// Whether `op` on the cluster is allowed: the file does not deny it.
    pub fn allows_cluster(&self, op: ClusterOperation) -> bool {
        !self.cluster_deny.contains(&op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let p = |s| NamePattern::parse(s).unwrap();
        assert!(p("secret-*").matches("secret-1"));
        assert!(p("secret-*").matches("secret-"));
        assert!(!p("secret-*").matches("secret"));
        assert!(p("billing").matches("billing"));
        assert!(!p("billing").matches("billing-2"));
        assert!(p("*").matches("anything"));
        assert!(NamePattern::parse("a*b").is_err());
        assert!(NamePattern::parse("").is_err());
    }

    #[test]
    fn deny_lists_are_per_operation() {
        let acls = Acls {
            transactional_id_describe_deny: vec![NamePattern::parse("hidden-*").unwrap()],
            transactional_id_describe_allow: None,
            transactional_id_write_deny: vec![],
            cluster_deny: vec![ClusterOperation::Alter],
        };
        assert!(!acls.allows_transactional_id(TxnIdOperation::Describe, "hidden-1"));
        assert!(acls.allows_transactional_id(TxnIdOperation::Write, "hidden-1"));
        assert!(acls.allows_transactional_id(TxnIdOperation::Describe, "open"));
        assert!(!acls.allows_cluster(ClusterOperation::Alter));
        assert!(acls.allows_cluster(ClusterOperation::ClusterAction));
    }

    #[test]
    fn an_allow_list_denies_describe_on_everything_else() {
        let acls = Acls {
            transactional_id_describe_allow: Some(vec![NamePattern::parse("app-*").unwrap()]),
            ..Default::default()
        };
        assert!(acls.allows_transactional_id(TxnIdOperation::Describe, "app-1"));
        assert!(!acls.allows_transactional_id(TxnIdOperation::Describe, "other"));
        assert!(acls.allows_transactional_id(TxnIdOperation::Write, "other"));
    }
}
