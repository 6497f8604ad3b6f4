//! The cluster file's ACLs: what a client principal may do.
//! Everything not listed is allowed, as for a principal with broad ALLOW
//! ACLs; a DENY wins over any ALLOW in Kafka's authorizer, so listing an
//! operation here is enough to model a missing permission. DESCRIBE on
//! transactional ids can also be given as an allow-list, the usual shape of
//! a non-admin principal's ACLs (ALLOW on some prefixes, nothing else).
//!
//! One set of rules applies to every principal (`User:ANONYMOUS` on a
//! listener without SASL) unless the principal (`User:alice` from SASL,
//! `User:CN=client` from a TLS client certificate) has its own set, which
//! then replaces it: each principal is judged by exactly one set, so what a
//! user may do is read in one place.

use std::collections::BTreeMap;

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

/// Operations on a topic that the file can deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicOperation {
    /// DescribeProducers (TOPIC_AUTHORIZATION_FAILED for every partition asked).
    Read,
    /// Metadata, ListOffsets, DescribeConfigs, and the topics DescribeTransactions shows.
    Describe,
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
    /// Topics on which READ is denied.
    pub topic_read_deny: Vec<NamePattern>,
    /// Topics on which DESCRIBE is denied.
    pub topic_describe_deny: Vec<NamePattern>,
    /// Transactional ids on which DESCRIBE is denied (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, or left out of listings).
    pub transactional_id_describe_deny: Vec<NamePattern>,
    /// If set, the only transactional ids on which DESCRIBE is allowed (ALLOW
    /// ACLs without a wildcard); ids matching none are denied.
    pub transactional_id_describe_allow: Option<Vec<NamePattern>>,
    /// Transactional ids on which WRITE is denied, so InitProducerId fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
    pub transactional_id_write_deny: Vec<NamePattern>,
    /// Operations denied on the cluster resource (CLUSTER_AUTHORIZATION_FAILED).
    pub cluster_deny: Vec<ClusterOperation>,
    /// Groups on which DESCRIBE is denied: GROUP_AUTHORIZATION_FAILED from
    /// FindCoordinator, DescribeGroups, ConsumerGroupDescribe and
    /// OffsetFetch, and left out of ListGroups.
    pub group_describe_deny: Vec<NamePattern>,
    /// If set, the only groups on which DESCRIBE is allowed (ALLOW ACLs
    /// without a wildcard); groups matching none are denied.
    pub group_describe_allow: Option<Vec<NamePattern>>,
    /// Principals (`User:alice`) with rules of their own, which replace the
    /// rules above for them. Their own `principals` are empty.
    pub principals: BTreeMap<String, Acls>,
}

impl Acls {
    /// The rules `principal` is judged by: its own, or else the general ones.
    pub fn rules_for(&self, principal: &str) -> &Acls {
        self.principals.get(principal).unwrap_or(self)
    }

    /// Whether `principal` may `op` transactional id `id`: no DENY pattern
    /// for `op` matches it, and for DESCRIBE an allow-list, if given, does.
    pub fn allows_transactional_id(&self, principal: &str, op: TxnIdOperation, id: &str) -> bool {
        let rules = self.rules_for(principal);
        let deny = match op {
            TxnIdOperation::Describe => &rules.transactional_id_describe_deny,
            TxnIdOperation::Write => &rules.transactional_id_write_deny,
        };
        let allowed = match (op, &rules.transactional_id_describe_allow) {
            (TxnIdOperation::Describe, Some(allow)) => allow.iter().any(|p| p.matches(id)),
            _ => true,
        };
        allowed && !deny.iter().any(|p| p.matches(id))
    }

    /// Whether `principal` may `op` topic `topic`: no DENY pattern for `op` matches it.
    pub fn allows_topic(&self, principal: &str, op: TopicOperation, topic: &str) -> bool {
        let rules = self.rules_for(principal);
        let deny = match op {
            TopicOperation::Read => &rules.topic_read_deny,
            TopicOperation::Describe => &rules.topic_describe_deny,
        };
        !deny.iter().any(|p| p.matches(topic))
    }

    /// Whether `principal` may DESCRIBE group `group`: no DENY pattern
    /// matches it, and an allow-list, if given, does.
    pub fn allows_describe_group(&self, principal: &str, group: &str) -> bool {
        let rules = self.rules_for(principal);
        let allowed = rules
            .group_describe_allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|p| p.matches(group)));
        allowed && !rules.group_describe_deny.iter().any(|p| p.matches(group))
    }

    /// Whether `principal` may `op` the cluster: its rules do not deny it.
    pub fn allows_cluster(&self, principal: &str, op: ClusterOperation) -> bool {
        !self.rules_for(principal).cluster_deny.contains(&op)
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
            cluster_deny: vec![ClusterOperation::Alter],
            topic_read_deny: vec![NamePattern::parse("secret").unwrap()],
            ..Default::default()
        };
        let anon = "User:ANONYMOUS";
        assert!(!acls.allows_transactional_id(anon, TxnIdOperation::Describe, "hidden-1"));
        assert!(acls.allows_transactional_id(anon, TxnIdOperation::Write, "hidden-1"));
        assert!(acls.allows_transactional_id(anon, TxnIdOperation::Describe, "open"));
        assert!(!acls.allows_cluster(anon, ClusterOperation::Alter));
        assert!(acls.allows_cluster(anon, ClusterOperation::ClusterAction));
        assert!(!acls.allows_topic(anon, TopicOperation::Read, "secret"));
        assert!(acls.allows_topic(anon, TopicOperation::Describe, "secret"));
        assert!(acls.allows_topic(anon, TopicOperation::Read, "secret-2"));
    }

    #[test]
    fn group_describe_can_be_denied_by_pattern() {
        let acls = Acls {
            group_describe_deny: vec![NamePattern::parse("hidden-*").unwrap()],
            ..Default::default()
        };
        assert!(!acls.allows_describe_group("User:ANONYMOUS", "hidden-etl"));
        assert!(acls.allows_describe_group("User:ANONYMOUS", "billing"));
        let only = Acls {
            group_describe_allow: Some(vec![NamePattern::parse("team-*").unwrap()]),
            group_describe_deny: vec![NamePattern::parse("team-secret").unwrap()],
            ..Default::default()
        };
        assert!(only.allows_describe_group("User:ANONYMOUS", "team-etl"));
        assert!(!only.allows_describe_group("User:ANONYMOUS", "billing"));
        assert!(!only.allows_describe_group("User:ANONYMOUS", "team-secret"));
    }

    #[test]
    fn an_allow_list_denies_describe_on_everything_else() {
        let acls = Acls {
            transactional_id_describe_allow: Some(vec![NamePattern::parse("app-*").unwrap()]),
            ..Default::default()
        };
        let anon = "User:ANONYMOUS";
        assert!(acls.allows_transactional_id(anon, TxnIdOperation::Describe, "app-1"));
        assert!(!acls.allows_transactional_id(anon, TxnIdOperation::Describe, "other"));
        assert!(acls.allows_transactional_id(anon, TxnIdOperation::Write, "other"));
    }

    #[test]
    fn a_principal_with_rules_of_its_own_is_judged_by_them_only() {
        let bob = Acls {
            topic_read_deny: vec![NamePattern::parse("payroll").unwrap()],
            ..Default::default()
        };
        let acls = Acls {
            transactional_id_describe_allow: Some(vec![NamePattern::parse("app-*").unwrap()]),
            principals: BTreeMap::from([("User:bob".to_string(), bob)]),
            ..Default::default()
        };
        // The general rules bind alice (no rules of her own) and the anonymous principal.
        for p in ["User:alice", "User:ANONYMOUS"] {
            assert!(!acls.allows_transactional_id(p, TxnIdOperation::Describe, "other"));
            assert!(acls.allows_topic(p, TopicOperation::Read, "payroll"));
        }
        // Bob's replace them: no allow-list for him, but no READ on payroll.
        assert!(acls.allows_transactional_id("User:bob", TxnIdOperation::Describe, "other"));
        assert!(!acls.allows_topic("User:bob", TopicOperation::Read, "payroll"));
        assert!(acls.allows_topic("User:bob", TopicOperation::Read, "orders"));
    }
}
