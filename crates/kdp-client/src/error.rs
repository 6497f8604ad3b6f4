//! The client's errors: one enum, cheap to clone (a failed connection hands
//! the same error to every request that was in flight on it).

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use kdp_domain::key_error::KeyError;
use kdp_wire::DecodeError;
use kdp_wire::ErrorCode;

/// The client's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between kdp and a broker.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A `host:port` that cannot be used.
    #[error("invalid broker address {addr:?}: {reason}")]
    InvalidAddress {
        /// The address as given.
        addr: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// DNS resolution failed, or resolved to nothing.
    #[error("cannot resolve {addr}: {source}")]
    Resolve {
        /// The broker, as `host:port`.
        addr: String,
        /// The resolver's error.
        #[source]
        source: Arc<io::Error>,
    },

    /// The TCP connection was refused or failed.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The broker, as `host:port`.
        addr: String,
        /// The last address's connect error.
        #[source]
        source: Arc<io::Error>,
    },

    /// Opening the stream took longer than the connect timeout.
    #[error("connecting to {addr} timed out after {}", fmt_duration(*.timeout))]
    ConnectTimeout {
        /// The broker, as `host:port`.
        addr: String,
        /// The connect timeout.
        timeout: Duration,
    },

    /// The peer closed the connection between two responses.
    #[error("{addr}: connection closed by the broker")]
    Closed {
        /// The broker, as `host:port`.
        addr: String,
    },

    /// The peer closed the connection in the middle of a response.
    #[error(
        "{addr}: connection closed in the middle of a response ({read} of {expected} bytes read)"
    )]
    Truncated {
        /// The broker, as `host:port`.
        addr: String,
        /// Bytes of the response read.
        read: usize,
        /// Bytes its size prefix announced.
        expected: usize,
    },

    /// Reading or writing the socket failed.
    #[error("{addr}: I/O error: {source}")]
    Io {
        /// The broker, as `host:port`.
        addr: String,
        /// The socket's error.
        #[source]
        source: Arc<io::Error>,
    },

    /// A response's size prefix is negative, above the maximum response size,
    /// or too small to hold a correlation id. Checked before allocating.
    #[error("{addr}: invalid response frame: {source}")]
    Frame {
        /// The broker, as `host:port`.
        addr: String,
        /// What is wrong with the frame.
        #[source]
        source: DecodeError,
    },

    /// The broker answered a request kdp never sent (or already answered).
    #[error("{addr}: response with unknown correlation id {correlation_id}")]
    UnknownCorrelationId {
        /// The broker, as `host:port`.
        addr: String,
        /// The response's `CorrelationId`.
        correlation_id: i32,
    },

    /// A response body (or its header) does not decode.
    #[error("{addr}: cannot decode {api} v{version}: {source}")]
    Decode {
        /// The broker, as `host:port`.
        addr: String,
        /// The API of the response.
        api: &'static str,
        /// The version it was decoded at.
        version: i16,
        /// Where and why decoding failed.
        #[source]
        source: DecodeError,
    },

    /// No response within the request's timeout; the request is abandoned.
    #[error("{addr}: {api} request timed out after {}", fmt_duration(*.timeout))]
    RequestTimeout {
        /// The broker, as `host:port`.
        addr: String,
        /// The API of the request.
        api: &'static str,
        /// How long kdp waited.
        timeout: Duration,
    },

    /// The connection was dropped by kdp itself (e.g. the client shut down).
    #[error("{addr}: connection shut down")]
    Shutdown {
        /// The broker, as `host:port`.
        addr: String,
    },

    /// ApiVersions answered with an error code kdp cannot recover from.
    #[error("{addr}: ApiVersions failed: {}", .error_code)]
    ApiVersions {
        /// The broker, as `host:port`.
        addr: String,
        /// The response's `ErrorCode`.
        error_code: ErrorCode,
    },

    /// No version of the API is supported by both kdp and the broker.
    #[error("{addr}: {}", unsupported_text(api, *.api_key, *.client, *.broker))]
    UnsupportedApi {
        /// The broker, as `host:port`.
        addr: String,
        /// The API's name.
        api: &'static str,
        /// The API's key.
        api_key: i16,
        /// kdp's range.
        client: (i16, i16),
        /// The broker's range, `None` if it does not know the API at all.
        broker: Option<(i16, i16)>,
    },

    /// The broker answered a request with an error code for the whole request.
    #[error("{addr}: {api} failed: {}{}", .error_code,
        .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Broker {
        /// The broker, as `host:port`.
        addr: String,
        /// The API of the request.
        api: &'static str,
        /// The response's `ErrorCode`.
        error_code: ErrorCode,
        /// The response's `ErrorMessage`, if it has one.
        message: Option<String>,
    },

    /// A feature needs a newer version of an API than a broker speaks.
    #[error("broker {broker}: {feature} needs {api} v{needed} (Apache Kafka {kafka} or newer); this broker speaks up to v{broker_max}")]
    FeatureUnsupported {
        /// The broker.
        broker: i32,
        /// The kdp flag or feature, e.g. `--transactional-id-pattern`.
        feature: &'static str,
        /// The API that carries it.
        api: &'static str,
        /// The version it needs.
        needed: i16,
        /// The first Kafka release with that version.
        kafka: &'static str,
        /// The broker's highest version.
        broker_max: i16,
    },

    /// The cluster metadata lists no broker.
    #[error("the cluster metadata lists no broker")]
    NoBrokers,

    /// A broker id that the cluster metadata does not list.
    #[error("broker {0} is not in the cluster metadata")]
    UnknownBroker(i32),

    /// A broker the caller chose (`--broker-id`) that the cluster does not
    /// have: nothing about it can be answered, so nothing is.
    #[error("broker {id} is not in the cluster; its brokers are {}", join_ids(.known))]
    NoSuchBroker {
        /// The id asked for.
        id: i32,
        /// The brokers the metadata lists.
        known: Vec<i32>,
    },

    /// None of the bootstrap servers could be reached.
    #[error("no bootstrap server could be reached: {}", join_attempts(.attempts))]
    Bootstrap {
        /// Why each server failed in the last pass over the list.
        attempts: Vec<Error>,
    },

    /// The TLS handshake failed, or the broker ended the TLS session with an
    /// alert; `reason` names the cause (unknown CA, hostname mismatch, ...).
    #[error("{addr}: TLS: {reason}")]
    Tls {
        /// The broker address the TLS session was with.
        addr: String,
        /// Why the handshake or session failed.
        reason: String,
    },

    /// SASL authentication failed (wrong credentials, mechanism not enabled,
    /// token endpoint failure). Never holds a secret.
    #[error("{addr}: SASL {mechanism} authentication failed: {message}")]
    Authentication {
        /// The broker address that refused the authentication.
        addr: String,
        /// The `sasl.mechanism` that was tried (`PLAIN`, `SCRAM-SHA-256`, `OAUTHBEARER`, ...).
        mechanism: &'static str,
        /// The Kafka error code from SaslHandshake or SaslAuthenticate
        /// (`UNSUPPORTED_SASL_MECHANISM`, ...), or `SASL_AUTHENTICATION_FAILED`
        /// when the client gave up (bad SCRAM server signature, token fetch failure).
        error_code: ErrorCode,
        /// The broker's error message, or the client's reason when it gave up first.
        message: String,
    },

    /// A TLS record came where a Kafka response was expected: the port is a
    /// TLS listener, spoken to in plaintext. No retry can fix that.
    #[error("{addr}: this port speaks TLS: set security.protocol=SSL (or SASL_SSL)")]
    TlsListener {
        /// The broker address.
        addr: String,
    },

    /// The operation's overall deadline passed.
    #[error("{}", deadline_text(what, *.timeout, *.started))]
    Deadline {
        /// The operation.
        what: &'static str,
        /// The deadline it had.
        timeout: Duration,
        /// Whether it had begun: a step the steps before it left no time
        /// for did not stall, and is not named as if it had.
        started: bool,
    },
}

/// What [`Error::Deadline`] says.
fn deadline_text(what: &str, timeout: Duration, started: bool) -> String {
    if started {
        format!("{what} did not finish within {}", fmt_duration(timeout))
    } else {
        format!(
            "{what} not started: the steps before it spent the {} budget",
            fmt_duration(timeout)
        )
    }
}

impl Error {
    pub(crate) fn io(addr: &str, e: io::Error) -> Self {
        if let Some(reason) = crate::security::tls_words::explain(&e) {
            return Error::Tls {
                addr: addr.to_string(),
                reason,
            };
        }
        Error::Io {
            addr: addr.to_string(),
            source: Arc::new(e),
        }
    }

    /// Whether the error concerns the connection (the broker may be down or
    /// unreachable) rather than the content of an answer.
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            Error::Resolve { .. }
                | Error::Connect { .. }
                | Error::ConnectTimeout { .. }
                | Error::Closed { .. }
                | Error::Truncated { .. }
                | Error::Io { .. }
                | Error::RequestTimeout { .. }
                | Error::Shutdown { .. }
                | Error::Bootstrap { .. }
                | Error::Deadline { .. }
        )
    }

    /// Whether the caller asked for something the cluster does not have
    /// (bad input, not a failure of the cluster).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::NoSuchBroker { .. })
    }

    /// Whether retrying cannot help: the configuration or credentials are
    /// wrong (TLS trust or identity, SASL). Bootstrap stops at once.
    /// Whether the same request may succeed if tried again (another broker,
    /// another connection, later): the one place that decides what is
    /// retried. Not retriable: wrong configuration or credentials (TLS trust
    /// or identity, a TLS port spoken to in plaintext, SASL), versions the
    /// broker does not support, answers kdp cannot read, an address that
    /// cannot be used, and a deadline that has passed.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::ConnectTimeout { .. }
            | Error::Closed { .. }
            | Error::Truncated { .. }
            | Error::Io { .. }
            | Error::RequestTimeout { .. }
            | Error::Shutdown { .. }
            | Error::NoBrokers
            | Error::UnknownBroker(_) => true,
            Error::Bootstrap { attempts } => attempts.iter().all(Error::is_retriable),
            Error::ApiVersions { error_code, .. } | Error::Broker { error_code, .. } => {
                error_code.is_retriable()
            }
            Error::InvalidAddress { .. }
            | Error::Frame { .. }
            | Error::UnknownCorrelationId { .. }
            | Error::Decode { .. }
            | Error::UnsupportedApi { .. }
            | Error::FeatureUnsupported { .. }
            | Error::Tls { .. }
            | Error::TlsListener { .. }
            | Error::Authentication { .. }
            | Error::NoSuchBroker { .. }
            | Error::Deadline { .. } => false,
        }
    }

    /// Whether retrying cannot help ([`Error::is_retriable`] is false):
    /// bootstrap and the admin driver stop at the first such error.
    pub fn is_fatal(&self) -> bool {
        !self.is_retriable()
    }

    /// This failure as a key's answer: [`Error::kafka_code`] and the
    /// error's text, produced by kdp (client side).
    pub fn key_error(&self) -> KeyError {
        KeyError::client(self.kafka_code(), self.to_string())
    }

    /// The Kafka error code that best describes this client-side failure,
    /// for reporting it where a broker's error code would stand.
    pub fn kafka_code(&self) -> ErrorCode {
        match self {
            Error::ConnectTimeout { .. }
            | Error::RequestTimeout { .. }
            | Error::Deadline { .. } => ErrorCode::REQUEST_TIMED_OUT,
            Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::Closed { .. }
            | Error::Truncated { .. }
            | Error::Io { .. }
            | Error::Shutdown { .. }
            | Error::Tls { .. }
            | Error::TlsListener { .. } => ErrorCode::NETWORK_EXCEPTION,
            // the error that stopped it, if one did (a refused login is no network fault)
            Error::Bootstrap { attempts } => attempts
                .iter()
                .find(|e| !e.is_retriable() && !matches!(e, Error::Deadline { .. }))
                .map_or(ErrorCode::NETWORK_EXCEPTION, Error::kafka_code),
            Error::Authentication { error_code, .. } => *error_code,
            Error::UnsupportedApi { .. } | Error::FeatureUnsupported { .. } => {
                ErrorCode::UNSUPPORTED_VERSION
            }
            Error::NoBrokers => ErrorCode::BROKER_NOT_AVAILABLE,
            Error::UnknownBroker(_) | Error::NoSuchBroker { .. } => ErrorCode::BROKER_NOT_AVAILABLE,
            Error::ApiVersions { error_code, .. } | Error::Broker { error_code, .. } => *error_code,
            Error::InvalidAddress { .. }
            | Error::Frame { .. }
            | Error::UnknownCorrelationId { .. }
            | Error::Decode { .. } => ErrorCode::UNKNOWN_SERVER_ERROR,
        }
    }
}

/// Says which Kafka release first has the API (from kdp-wire's registry),
/// so that an operator facing an older broker knows what to upgrade to.
fn unsupported_text(
    api: &str,
    api_key: i16,
    client: (i16, i16),
    broker: Option<(i16, i16)>,
) -> String {
    match broker {
        None => {
            let added = kdp_wire::registry::by_key(api_key)
                .map(|a| format!("added in Kafka {}; ", a.first_release))
                .unwrap_or_default();
            format!(
                "the broker does not support {api} ({added}kdp speaks v{}-v{})",
                client.0, client.1
            )
        }
        Some((min, max)) => format!(
            "no common version of {api}: the broker supports v{min}-v{max}, kdp v{}-v{}",
            client.0, client.1
        ),
    }
}

fn join_ids(ids: &[i32]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    ids.iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn join_attempts(attempts: &[Error]) -> String {
    if attempts.is_empty() {
        return "no address given".into();
    }
    attempts
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// `1.5s`, `300ms`, `2m0s`: short and exact enough for error messages.
pub(crate) fn fmt_duration(d: Duration) -> impl fmt::Display {
    struct D(Duration);
    impl fmt::Display for D {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let ms = self.0.as_millis();
            if ms < 1000 {
                write!(f, "{ms}ms")
            } else if ms / 1000 * 1000 == ms {
                write!(f, "{}s", ms / 1000)
            } else {
                write!(f, "{:.1}s", self.0.as_secs_f64())
            }
        }
    }
    D(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsupported_api_names_the_kafka_release_that_added_it() {
        let unsupported = |api_key, broker| Error::UnsupportedApi {
            addr: "b1:9092".into(),
            api: "ListTransactions",
            api_key,
            client: (0, 2),
            broker,
        };
        let release =
            kdp_wire::registry::by_key(kdp_wire::api::LIST_TRANSACTIONS).map(|a| a.first_release);
        assert_eq!(release, Some("3.0"));
        assert_eq!(
            unsupported(kdp_wire::api::LIST_TRANSACTIONS, None).to_string(),
            "b1:9092: the broker does not support ListTransactions \
             (added in Kafka 3.0; kdp speaks v0-v2)"
        );
        // A key outside the registry has no release to name.
        assert_eq!(
            unsupported(1000, None).to_string(),
            "b1:9092: the broker does not support ListTransactions (kdp speaks v0-v2)"
        );
        // A version mismatch is not a missing API: no release claimed.
        assert!(!unsupported(kdp_wire::api::LIST_TRANSACTIONS, Some((3, 4)))
            .to_string()
            .contains("added in"));
    }

    #[test]
    fn retriable_or_not_and_the_code_a_bootstrap_failure_reports() {
        let refused = Error::Connect {
            addr: "b1:9092".into(),
            source: Arc::new(io::ErrorKind::ConnectionRefused.into()),
        };
        let login = Error::Authentication {
            addr: "b1:9092".into(),
            mechanism: "PLAIN",
            error_code: ErrorCode::SASL_AUTHENTICATION_FAILED,
            message: "bad credentials".into(),
        };
        let tls = Error::TlsListener {
            addr: "b1:9092".into(),
        };
        assert!(refused.is_retriable());
        assert!(!login.is_retriable() && !tls.is_retriable());
        let deadline = Error::Deadline {
            what: "connecting to the bootstrap servers",
            timeout: Duration::from_secs(1),
            started: true,
        };
        let unreachable = Error::Bootstrap {
            attempts: vec![refused.clone(), deadline],
        };
        assert_eq!(unreachable.kafka_code(), ErrorCode::NETWORK_EXCEPTION);
        assert!(!unreachable.is_retriable());
        let refused_login = Error::Bootstrap {
            attempts: vec![login],
        };
        assert_eq!(
            refused_login.kafka_code(),
            ErrorCode::SASL_AUTHENTICATION_FAILED
        );
    }
}
