//! The cluster file's ACLs: what the (single) client principal is denied.
//! Everything not listed is allowed, as for a principal with broad ALLOW
//! ACLs; a DENY wins over any ALLOW in Kafka's authorizer, so listing an
//! operation here is enough to model a missing permission.

/// One resource name pattern: a literal name, a prefix (`"secret-*"`,
/// Kafka's PREFIXED pattern type) or `"*"` (every name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamePattern {
    Literal(String),
    Prefix(String),
    Any,
}

impl NamePattern {
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
    Alter,
    ClusterAction,
    DescribeConfigs,
}

impl ClusterOperation {
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
    pub transactional_id_describe_deny: Vec<NamePattern>,
    pub transactional_id_write_deny: Vec<NamePattern>,
    pub cluster_deny: Vec<ClusterOperation>,
}

impl Acls {
    pub fn allows_transactional_id(&self, op: TxnIdOperation, id: &str) -> bool {
        let deny = match op {
            TxnIdOperation::Describe => &self.transactional_id_describe_deny,
            TxnIdOperation::Write => &self.transactional_id_write_deny,
        };
        !deny.iter().any(|p| p.matches(id))
    }

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
            transactional_id_write_deny: vec![],
            cluster_deny: vec![ClusterOperation::Alter],
        };
        assert!(!acls.allows_transactional_id(TxnIdOperation::Describe, "hidden-1"));
        assert!(acls.allows_transactional_id(TxnIdOperation::Write, "hidden-1"));
        assert!(acls.allows_transactional_id(TxnIdOperation::Describe, "open"));
        assert!(!acls.allows_cluster(ClusterOperation::Alter));
        assert!(acls.allows_cluster(ClusterOperation::ClusterAction));
    }
}
