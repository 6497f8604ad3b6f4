//! What serving an API takes: a [`Handler`] for its declared request. The
//! broker decodes the request (the API and its versions come from kdp-wire's
//! registry), calls the handler, and frames the answer; a handler decides
//! which lock it takes on the cluster, and for how long.

use kdp_wire::Request;

use super::{Caller, Refusal};
use crate::broker::Shared;

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
    /// they are built where they can be (see [`super::budget`]).
    pub limit: usize,
}

/// How a broker answers one API's request: implemented for the request
/// type the registry declares, so adding an API is its declaration, its
/// handler and their tests.
pub trait Handler: Request {
    /// The answer, or why there is none (the connection closes).
    fn handle(&self, call: &Call<'_>) -> Result<Self::Response, Refusal>;
}
