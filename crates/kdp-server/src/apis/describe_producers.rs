//! DescribeProducers, served by [`crate::responder`] over the cluster
//! file, with the file's ACLs for the request's principal.

use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};

use super::handler::{Call, Handler, Refusal};
use crate::acls::TopicOperation;
use crate::cluster::Cluster;
use crate::responder::{describe_producers_within, Authorizer, ClusterBroker, RequestContext};

impl Handler for DescribeProducersRequest {
    fn handle(&self, call: &Call<'_>) -> Result<DescribeProducersResponse, Refusal> {
        let cluster = call.shared.read();
        let view = ClusterBroker {
            cluster: &cluster,
            broker_id: call.caller.broker_id,
        };
        let authorizer = FileAcls {
            cluster: &cluster,
            hook: call.shared.authorizer.as_ref(),
        };
        // Bounded while it is built: a small request can ask for a huge
        // answer (one error message per partition, or one partition's
        // state many times).
        Ok(describe_producers_within(
            self,
            &view,
            &authorizer,
            call.caller.request,
            call.version,
            call.limit,
        )?)
    }
}

/// READ on topics for DescribeProducers (the only check it makes): the
/// cluster file's ACLs for the request's principal, then the hook.
struct FileAcls<'a> {
    cluster: &'a Cluster,
    hook: &'a dyn Authorizer,
}

impl Authorizer for FileAcls<'_> {
    fn authorize_read_topic(&self, ctx: &RequestContext, topic: &str) -> bool {
        self.cluster
            .acls
            .allows_topic(&ctx.principal, TopicOperation::Read, topic)
            && self.hook.authorize_read_topic(ctx, topic)
    }
}
