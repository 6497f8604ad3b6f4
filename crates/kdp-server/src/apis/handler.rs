//! What serving an API takes: a [`Handler`] for its declared request. The
//! broker decodes the request (the API and its versions come from kdp-wire's
//! registry), calls the handler, and frames the answer; a handler decides
//! which lock it takes on the cluster, and for how long.

use kdp_wire::Request;

use crate::acls::{ClusterOperation, TopicOperation, TxnIdOperation};
use crate::cluster::Cluster;
use crate::responder::{Authorizer, RequestContext};
use crate::shared::Shared;

/// One request being served.
pub struct Call<'a> {
    /// The cluster and what every broker shares.
    pub shared: &'a Shared,
    /// Who asks, on which broker, and when.
    pub caller: Caller<'a>,
    /// The request's version (the answer's too).
    pub version: i16,
    /// The largest answer body the client accepts (`max_response_size`
    /// less the response header): answers are refused above it, before
    /// they are built where they can be (see [`crate::budget`]).
    pub limit: usize,
}

/// How a broker answers one API's request: implemented for the request
/// type the registry declares, so adding an API is its declaration, its
/// handler and their tests.
pub trait Handler: Request {
    /// The answer, or why there is none (the connection closes).
    fn handle(&self, call: &Call<'_>) -> Result<Self::Response, Refusal>;
}

/// Why a request gets no answer: it cannot be answered at all (Kafka
/// closes the connection on the InvalidRequestException), or its answer
/// would be larger than the client accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The request is invalid.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The answer would be too large.
    #[error(transparent)]
    TooLarge(#[from] crate::budget::TooLarge),
}

/// Who asks, on which broker, and when.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    /// The broker answering.
    pub broker_id: i32,
    /// The ACL hook consulted besides the file's ACLs (e.g. topic READ/DESCRIBE).
    pub authorizer: &'a dyn Authorizer,
    /// The principal, client id and address of the request, passed to the authorizer.
    pub request: &'a RequestContext,
    /// Milliseconds since the epoch (durations, marker timestamps).
    pub now_ms: i64,
}

impl Caller<'_> {
    /// An operation on a transactional id: the file's ACLs and the hook.
    pub fn may_transactional_id(&self, cluster: &Cluster, op: TxnIdOperation, id: &str) -> bool {
        cluster
            .acls
            .allows_transactional_id(&self.request.principal, op, id)
            && self
                .authorizer
                .authorize_transactional_id(self.request, op, id)
    }

    /// An operation on the cluster: the file's ACLs and the hook.
    pub fn may_cluster(&self, cluster: &Cluster, op: ClusterOperation) -> bool {
        cluster.acls.allows_cluster(&self.request.principal, op)
            && self.authorizer.authorize_cluster(self.request, op)
    }

    /// DESCRIBE on a group: the file's ACLs.
    pub fn may_describe_group(&self, cluster: &Cluster, group: &str) -> bool {
        cluster
            .acls
            .allows_describe_group(&self.request.principal, group)
    }

    /// DESCRIBE on a topic: the file's ACLs and the hook.
    pub fn may_describe_topic(&self, cluster: &Cluster, topic: &str) -> bool {
        cluster
            .acls
            .allows_topic(&self.request.principal, TopicOperation::Describe, topic)
            && self
                .authorizer
                .authorize_describe_topic(self.request, topic)
    }
}

/// Why a request cannot be answered at all (Kafka closes the connection on
/// the InvalidRequestException it throws, e.g. from `CoordinatorType.forId`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);
