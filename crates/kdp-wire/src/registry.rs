//! The APIs kdp speaks, listed once: each line names an API (its key and
//! name come from [`crate::api`]) and its request and response messages
//! (whose versions come from their declarations). Everything that lists
//! APIs derives from this one list:
//!
//! - [`DECLARED`]: key, name, versions, first Kafka release and
//!   type-erased JSON decoders, for `kdp decode --api NAME|KEY`, error
//!   messages and the mock's supported-API table;
//! - [`for_each_api!`](crate::for_each_api): the list itself, handed to a
//!   macro, for code that needs the types: the mock's dispatch, kdp-test-
//!   support's error-code faults, the fuzz checks of every message and of
//!   every view (`fuzz_checks::every_api`, `every_view`), and the tests
//!   that hold every message to the `kafka-protocol` crate, to its every
//!   strict prefix, to its JSON form and to its view (`tests/declared.rs`,
//!   `tests/view.rs`, the seeds of `tests/fuzz_corpus.rs`, kdp-server's
//!   `tests/registry.rs`, `kdp decode`'s capture test).
//!
//! # Adding an API
//!
//! 1. Its declaration: a module in [`crate::messages`] with the request and
//!    response under `#[kafka]` (which also gives their views), exported
//!    from `messages/mod.rs`.
//! 2. One line below, in the order the mock advertises.
//! 3. Its handler in kdp-server (`impl kdp_server::apis::Handler for
//!    TheRequest`): the mock's dispatch is derived from this list, so the
//!    workspace does not build without it.
//! 4. Tests of what is particular to it. The cross-check with
//!    `kafka-protocol` fails until the peer knows the API at every version
//!    declared, or the difference is listed in `tests/declared.rs` with a
//!    test of its own; `tests/readme.rs` fails until the README's list of
//!    APIs names it.
//!
//! A key Kafka added after this crate was written also needs its row in
//! [`crate::api`]'s table of every Kafka key.

use serde::Serialize;

use crate::error::DecodeError;
use crate::frame::{decode_request_frame, decode_response_frame};
use crate::header::{RequestHeader, ResponseHeader};
use crate::message::{decode_exact, Message, Request};

/// Calls `$callback! { $( $Name: $KEY, $Request, $Response; )* }` with
/// every API of the registry, in the order the mock advertises them.
/// `$KEY` names a constant of [`crate::api`]; the message types are in
/// [`crate::messages`]. `for_each_api!(@with_release $callback)` adds, after
/// the response, the first Kafka release that has the API:
/// `$Name: $KEY, $Request, $Response, "3.0";`.
#[macro_export]
macro_rules! for_each_api {
    (@with_release $callback:ident) => {
        $crate::registry::for_each_api! { @list $callback with_release }
    };
    ($callback:ident) => {
        $crate::registry::for_each_api! { @list $callback plain }
    };
    // The one list. Releases from Kafka's KIPs and release notes: the
    // first release whose broker answers the API at all.
    (@list $callback:ident $mode:ident) => {
        $crate::registry::for_each_api! { @emit $callback $mode
            Metadata: METADATA, MetadataRequest, MetadataResponse, "0.8.0";
            ApiVersions: API_VERSIONS, ApiVersionsRequest, ApiVersionsResponse, "0.10.0";
            DescribeProducers: DESCRIBE_PRODUCERS, DescribeProducersRequest, DescribeProducersResponse, "2.8";
            FindCoordinator: FIND_COORDINATOR, FindCoordinatorRequest, FindCoordinatorResponse, "0.9.0";
            ListTransactions: LIST_TRANSACTIONS, ListTransactionsRequest, ListTransactionsResponse, "3.0";
            DescribeTransactions: DESCRIBE_TRANSACTIONS, DescribeTransactionsRequest, DescribeTransactionsResponse, "3.0";
            DescribeConfigs: DESCRIBE_CONFIGS, DescribeConfigsRequest, DescribeConfigsResponse, "0.11.0";
            ListOffsets: LIST_OFFSETS, ListOffsetsRequest, ListOffsetsResponse, "0.8.0";
            WriteTxnMarkers: WRITE_TXN_MARKERS, WriteTxnMarkersRequest, WriteTxnMarkersResponse, "0.11.0";
            InitProducerId: INIT_PRODUCER_ID, InitProducerIdRequest, InitProducerIdResponse, "0.11.0";
            SaslHandshake: SASL_HANDSHAKE, SaslHandshakeRequest, SaslHandshakeResponse, "0.10.0";
            SaslAuthenticate: SASL_AUTHENTICATE, SaslAuthenticateRequest, SaslAuthenticateResponse, "1.0";
            ListGroups: LIST_GROUPS, ListGroupsRequest, ListGroupsResponse, "0.9.0";
            DescribeGroups: DESCRIBE_GROUPS, DescribeGroupsRequest, DescribeGroupsResponse, "0.9.0";
            OffsetFetch: OFFSET_FETCH, OffsetFetchRequest, OffsetFetchResponse, "0.8.1";
            ConsumerGroupDescribe: CONSUMER_GROUP_DESCRIBE, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, "4.0";
            Fetch: FETCH, FetchRequest, FetchResponse, "0.8.0";
            // Added unstable in early 2025 (apache/kafka#18500); the first
            // release whose brokers answer it without unstable versions is 4.1.
            DescribeShareGroupOffsets: DESCRIBE_SHARE_GROUP_OFFSETS, DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse, "4.1";
            StreamsGroupDescribe: STREAMS_GROUP_DESCRIBE, StreamsGroupDescribeRequest, StreamsGroupDescribeResponse, "4.1";
        }
    };
    (@emit $callback:ident plain $($name:ident: $key:ident, $req:ident, $resp:ident, $since:literal;)*) => {
        $callback! { $($name: $key, $req, $resp;)* }
    };
    (@emit $callback:ident with_release $($name:ident: $key:ident, $req:ident, $resp:ident, $since:literal;)*) => {
        $callback! { $($name: $key, $req, $resp, $since;)* }
    };
}

// The macro by its module's path, for its own recursion and this crate's
// callers: `#[macro_export]` also puts it at the crate root, for users.
#[doc(hidden)]
pub use for_each_api;

/// Decodes a whole buffer as one message of an API, to its JSON form.
pub type DecodeJson = fn(&[u8], i16) -> Result<serde_json::Value, DecodeError>;

/// Decodes a whole frame of an API (its version read from the request
/// header, or given for a response) to the header's and the body's JSON.
pub type DecodeFrameJson =
    fn(&[u8], i16) -> Result<(serde_json::Value, serde_json::Value), DecodeError>;

/// One API of the registry.
#[derive(Debug, Clone, Copy)]
pub struct DeclaredApi {
    /// The API key.
    pub key: i16,
    /// Kafka's name for the API, e.g. `"DescribeProducers"`.
    pub name: &'static str,
    /// The lowest version declared (request and response alike).
    pub lowest_version: i16,
    /// The highest version declared.
    pub highest_version: i16,
    /// The request's schema name, e.g. `"DescribeProducersRequest"`.
    pub request_name: &'static str,
    /// The response's schema name.
    pub response_name: &'static str,
    /// The first Kafka release whose brokers answer the API, e.g. `"3.0"`.
    pub first_release: &'static str,
    /// A request body to JSON.
    pub decode_request: DecodeJson,
    /// A response body to JSON.
    pub decode_response: DecodeJson,
    /// A request frame to JSON (the version argument is ignored: the header says).
    pub decode_request_frame: DecodeFrameJson,
    /// A response frame at a version to JSON.
    pub decode_response_frame: DecodeFrameJson,
}

impl DeclaredApi {
    /// Every version declared.
    pub fn versions(&self) -> std::ops::RangeInclusive<i16> {
        self.lowest_version..=self.highest_version
    }
}

fn to_json<T: Serialize>(value: &T) -> serde_json::Value {
    // Declared messages serialize infallibly (no maps with non-string keys).
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

fn decode_json<M: Message + Serialize>(
    bytes: &[u8],
    version: i16,
) -> Result<serde_json::Value, DecodeError> {
    decode_exact::<M>(bytes, version).map(|m| to_json(&m))
}

fn request_frame_json<R: Request + Serialize>(
    bytes: &[u8],
    _version: i16,
) -> Result<(serde_json::Value, serde_json::Value), DecodeError> {
    let (header, body): (RequestHeader, R) = decode_request_frame(bytes)?;
    Ok((to_json(&header), to_json(&body)))
}

fn response_frame_json<M: Message + Serialize>(
    bytes: &[u8],
    version: i16,
) -> Result<(serde_json::Value, serde_json::Value), DecodeError> {
    let (header, body): (ResponseHeader, M) = decode_response_frame(bytes, version)?;
    Ok((to_json(&header), to_json(&body)))
}

macro_rules! declared_table {
    ($($name:ident: $key:ident, $req:ident, $resp:ident, $since:literal;)*) => {
        /// Every API of the registry, in the order the mock advertises them.
        pub const DECLARED: &[DeclaredApi] = &[
            $(DeclaredApi {
                key: crate::api::$key,
                name: stringify!($name),
                lowest_version: <crate::messages::$req as Message>::LOWEST_VERSION,
                highest_version: <crate::messages::$req as Message>::HIGHEST_VERSION,
                request_name: <crate::messages::$req as Message>::NAME,
                response_name: <crate::messages::$resp as Message>::NAME,
                first_release: $since,
                decode_request: decode_json::<crate::messages::$req>,
                decode_response: decode_json::<crate::messages::$resp>,
                decode_request_frame: request_frame_json::<crate::messages::$req>,
                decode_response_frame: response_frame_json::<crate::messages::$resp>,
            },)*
        ];

        // The declarations agree with the registry: the response is the
        // request's, with the same key and versions.
        $(
            const _: () = {
                type Req = crate::messages::$req;
                type Resp = crate::messages::$resp;
                fn same<R: Request<Response = Resp>>() {}
                let _ = same::<Req>;
                assert!(<Req as Message>::API_KEY == crate::api::$key);
                assert!(<Resp as Message>::API_KEY == crate::api::$key);
                assert!(<Req as Message>::LOWEST_VERSION == <Resp as Message>::LOWEST_VERSION);
                assert!(<Req as Message>::HIGHEST_VERSION == <Resp as Message>::HIGHEST_VERSION);
            };
        )*
    };
}

for_each_api!(@with_release declared_table);

/// The API a user names: its Kafka name (any case) or its key.
pub fn find(name_or_key: &str) -> Option<&'static DeclaredApi> {
    let wanted = name_or_key.trim();
    match wanted.parse::<i16>() {
        Ok(key) => DECLARED.iter().find(|a| a.key == key),
        Err(_) => DECLARED
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(wanted)),
    }
}

/// The registry's API for `key`.
pub fn by_key(key: i16) -> Option<&'static DeclaredApi> {
    DECLARED.iter().find(|a| a.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_find_the_same_api() {
        assert_eq!(find("DescribeProducers").map(|a| a.key), Some(61));
        assert_eq!(find("describeproducers").map(|a| a.key), Some(61));
        assert_eq!(find("61").map(|a| a.name), Some("DescribeProducers"));
        assert!(find("Produce").is_none() && find("0").is_none() && find("x").is_none());
        for a in DECLARED {
            assert_eq!(crate::api::name(a.key), Some(a.name), "{}", a.name);
            assert_eq!(a.request_name, format!("{}Request", a.name));
            assert_eq!(a.response_name, format!("{}Response", a.name));
            assert_eq!(by_key(a.key).map(|b| b.name), Some(a.name));
        }
        let mut keys: Vec<i16> = DECLARED.iter().map(|a| a.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), DECLARED.len(), "an API is declared twice");
    }

    #[test]
    fn each_api_names_the_kafka_release_that_added_it() {
        let release = |name: &str| find(name).map(|a| a.first_release);
        // KIP-664: DescribeProducers in 2.8, the coordinator's APIs in 3.0.
        assert_eq!(release("DescribeProducers"), Some("2.8"));
        assert_eq!(release("ListTransactions"), Some("3.0"));
        assert_eq!(release("DescribeTransactions"), Some("3.0"));
        // KIP-98 (0.11.0) and KIP-152 (1.0).
        assert_eq!(release("WriteTxnMarkers"), Some("0.11.0"));
        assert_eq!(release("SaslAuthenticate"), Some("1.0"));
        for a in DECLARED {
            let parts: Vec<&str> = a.first_release.split('.').collect();
            assert!(
                (2..=3).contains(&parts.len()) && parts.iter().all(|p| p.parse::<u8>().is_ok()),
                "{}: {:?} is not a Kafka release",
                a.name,
                a.first_release
            );
        }
    }
}
