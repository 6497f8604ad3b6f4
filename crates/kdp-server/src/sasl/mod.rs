//! SASL on the mock's listeners, as Kafka's `SaslServerAuthenticator` runs
//! it: once a cluster file has users, a connection must authenticate
//! (SaslHandshake v0 or v1, then SaslAuthenticate v0-2, or raw tokens after
//! a v0 handshake) before any request but ApiVersions is served.
//!
//! [`SaslGate`] is one connection's state, without I/O: each request frame
//! goes through [`SaslGate::on_frame`], which answers the SASL requests
//! itself and lets the rest through once the client is authenticated.
//! Before that, frames are bounded by [`MAX_UNAUTHENTICATED_FRAME`].

pub mod plain;
pub mod scram;
pub mod users;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use kdp_wire::api;
use kdp_wire::frame::encode_response_frame;
use kdp_wire::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, Message, Reader, Request, RequestHeader};

use self::scram::{ScramServer, ScramStep};
pub use self::users::{SaslMechanism, User, Users};

/// Kafka's `sasl.server.max.receive.size` default: the largest frame a
/// client that has not authenticated yet may send.
pub const MAX_UNAUTHENTICATED_FRAME: usize = 512 * 1024;

/// The principal of a connection that did not authenticate.
pub const ANONYMOUS: &str = "User:ANONYMOUS";

/// What to do with one request frame.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it as a normal request, as [`SaslGate::principal`].
    Serve,
    /// Send this frame (size prefix included) and read on.
    Answer(Vec<u8>),
    /// Send this frame, then close the connection for the reason given.
    AnswerAndClose(Vec<u8>, String),
    /// Close the connection without an answer.
    Close(String),
}

#[derive(Debug)]
enum State {
    /// No users: SASL is off and every request is served.
    Open,
    /// Waiting for SaslHandshake (ApiVersions is served meanwhile).
    Handshake,
    /// The mechanism is chosen; tokens come in SaslAuthenticate requests,
    /// or raw after a v0 handshake.
    Authenticate {
        mechanism: SaslMechanism,
        raw: bool,
        scram: Option<ScramServer>,
    },
    /// Authenticated as this principal.
    Done(String),
    /// The exchange failed; the connection is closing.
    Failed,
}

/// One connection's SASL state.
#[derive(Debug)]
pub struct SaslGate {
    state: State,
    /// The principal while SASL has not named one: `User:ANONYMOUS`, or a
    /// TLS client certificate's on a listener without SASL.
    unauthenticated: String,
}

/// The result of one authentication step.
enum Step {
    Challenge(Vec<u8>),
    Success(String, Vec<u8>),
    /// (message for the client, reason for the log)
    Failure(String, String),
}

fn random_nonce() -> String {
    let mut raw = [0u8; 24];
    // Without randomness the nonce is fixed: still a working mock.
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut raw);
    B64.encode(raw)
}

fn frame<M: Message>(correlation_id: i32, body: &M, version: i16) -> Vec<u8> {
    let mut out = Vec::new();
    encode_response_frame(&mut out, correlation_id, body, version);
    out
}

impl SaslGate {
    /// The state of a new connection: open if `users` is empty, else
    /// waiting for SaslHandshake.
    pub fn new(users: &Users) -> Self {
        SaslGate {
            state: if users.is_enabled() {
                State::Handshake
            } else {
                State::Open
            },
            unauthenticated: ANONYMOUS.to_string(),
        }
    }

    /// Names the connection's principal from its TLS client certificate
    /// (see [`crate::cert_principal`]), used as Kafka uses it: where SASL is
    /// off. With SASL on, the SASL user is the principal.
    pub fn with_certificate_principal(mut self, principal: Option<String>) -> Self {
        if let (State::Open, Some(p)) = (&self.state, principal) {
            self.unauthenticated = p;
        }
        self
    }

    /// Who the connection's requests come from.
    pub fn principal(&self) -> String {
        match &self.state {
            State::Done(p) => p.clone(),
            _ => self.unauthenticated.clone(),
        }
    }

    /// Whether requests go straight through: SASL is off or done.
    pub fn passes(&self) -> bool {
        matches!(self.state, State::Open | State::Done(_))
    }

    /// The largest frame accepted now: bounded until the client authenticated.
    pub fn max_frame(&self, configured: usize) -> usize {
        match self.state {
            State::Open | State::Done(_) => configured,
            _ => configured.min(MAX_UNAUTHENTICATED_FRAME),
        }
    }

    /// Takes one request frame's payload (the bytes after the size prefix).
    pub fn on_frame(&mut self, users: &Users, payload: &[u8]) -> Verdict {
        match &mut self.state {
            // KafkaApis answers SASL requests here (ILLEGAL_SASL_STATE).
            State::Open | State::Done(_) => Verdict::Serve,
            State::Failed => Verdict::Close("the SASL exchange already failed".into()),
            State::Handshake => self.handshake(users, payload),
            State::Authenticate { raw: true, .. } => match self.token(users, payload) {
                Step::Challenge(bytes) | Step::Success(_, bytes) => {
                    let mut out = Vec::with_capacity(4 + bytes.len());
                    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                    out.extend_from_slice(&bytes);
                    Verdict::Answer(out)
                }
                // After a v0 handshake there is no way to send an error: close.
                Step::Failure(_, reason) => Verdict::Close(reason),
            },
            State::Authenticate { raw: false, .. } => self.authenticate(users, payload),
        }
    }

    fn handshake(&mut self, users: &Users, payload: &[u8]) -> Verdict {
        // ApiVersions is served as a normal request (which reads its header).
        if payload.get(..2) == Some(&api::API_VERSIONS.to_be_bytes()[..]) {
            return Verdict::Serve;
        }
        let (header, req) = match expect::<SaslHandshakeRequest>(payload, "handshake") {
            Ok(x) => x,
            Err(why) => return Verdict::Close(why),
        };
        let version = header.request_api_version;
        let enabled = users.enabled_mechanisms();
        let mechanisms: Vec<String> = enabled.iter().map(|m| m.name().to_string()).collect();
        match SaslMechanism::from_name(&req.mechanism).filter(|m| enabled.contains(m)) {
            Some(mechanism) => {
                self.state = State::Authenticate {
                    mechanism,
                    raw: version == 0,
                    scram: match mechanism {
                        SaslMechanism::Plain => None,
                        SaslMechanism::Scram(m) => Some(ScramServer::new(m)),
                    },
                };
                let resp = SaslHandshakeResponse {
                    error_code: ErrorCode::NONE,
                    mechanisms,
                    ..Default::default()
                };
                Verdict::Answer(frame(header.correlation_id, &resp, version))
            }
            None => {
                self.state = State::Failed;
                let resp = SaslHandshakeResponse {
                    error_code: ErrorCode::UNSUPPORTED_SASL_MECHANISM,
                    mechanisms,
                    ..Default::default()
                };
                Verdict::AnswerAndClose(
                    frame(header.correlation_id, &resp, version),
                    format!("Unsupported SASL mechanism {:?}", shown(&req.mechanism)),
                )
            }
        }
    }

    fn authenticate(&mut self, users: &Users, payload: &[u8]) -> Verdict {
        let (header, req) = match expect::<SaslAuthenticateRequest>(payload, "authentication") {
            Ok(x) => x,
            Err(why) => {
                self.state = State::Failed;
                return Verdict::Close(why);
            }
        };
        let version = header.request_api_version;
        let answer = |error_code, error_message, auth_bytes| {
            let resp = SaslAuthenticateResponse {
                error_code,
                error_message,
                auth_bytes,
                ..Default::default()
            };
            frame(header.correlation_id, &resp, version)
        };
        match self.token(users, &req.auth_bytes) {
            Step::Challenge(bytes) | Step::Success(_, bytes) => {
                Verdict::Answer(answer(ErrorCode::NONE, None, bytes))
            }
            Step::Failure(message, reason) => Verdict::AnswerAndClose(
                answer(
                    ErrorCode::SASL_AUTHENTICATION_FAILED,
                    Some(message),
                    Vec::new(),
                ),
                reason,
            ),
        }
    }

    /// Feeds one token to the chosen mechanism and moves the state on.
    fn token(&mut self, users: &Users, token: &[u8]) -> Step {
        let State::Authenticate {
            mechanism, scram, ..
        } = &mut self.state
        else {
            return Step::Failure(
                "Unexpected SASL token.".into(),
                "a SASL token outside the exchange".into(),
            );
        };
        let mechanism = *mechanism;
        let step = match scram {
            None => match plain::authenticate(users, token) {
                Ok(user) => Step::Success(user, Vec::new()),
                Err(e) => Step::Failure(e.0.to_string(), format!("PLAIN: {}", e.0)),
            },
            Some(server) => match server.step(users, token, &random_nonce()) {
                Ok(ScramStep::Challenge(c)) => Step::Challenge(c),
                Ok(ScramStep::Success { user, server_final }) => Step::Success(user, server_final),
                // Kafka wraps every SaslException in this one message.
                Err(e) => Step::Failure(
                    format!(
                        "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
                        mechanism.name()
                    ),
                    format!("{}: {}", mechanism.name(), e.0),
                ),
            },
        };
        match &step {
            Step::Success(user, _) => self.state = State::Done(format!("User:{user}")),
            Step::Failure(..) => self.state = State::Failed,
            Step::Challenge(_) => {}
        }
        step
    }
}

/// A client-chosen string as the log shows it: at most 64 characters.
fn shown(s: &str) -> String {
    match s.char_indices().nth(64) {
        Some((at, _)) => format!("{}...", s.get(..at).unwrap_or_default()),
        None => s.to_string(),
    }
}

/// The request of type `M` that `payload` must be, in the SASL `phase`;
/// anything else (another request, a malformed one) is the reason to close.
fn expect<M: Request>(payload: &[u8], phase: &str) -> Result<(RequestHeader, M), String> {
    let mut r = Reader::new(payload);
    let (header, _) =
        RequestHeader::decode_auto(&mut r).map_err(|e| format!("malformed request header: {e}"))?;
    let (key, version) = (header.request_api_key, header.request_api_version);
    let name = api::name(key).unwrap_or("unknown");
    if key != M::API_KEY {
        return Err(format!(
            "Unexpected Kafka request of type {name} during SASL {phase}."
        ));
    }
    let body = r.take(r.remaining(), "body").unwrap_or_default();
    let req = decode_exact(body, version)
        .map_err(|e| format!("cannot read {name} v{version} request body: {e}"))?;
    Ok((header, req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
    use kdp_wire::messages::{ApiVersionsRequest, MetadataRequest};

    fn users() -> Users {
        Users::new(vec![User::new(
            "alice",
            "alice-pw",
            &[SaslMechanism::Plain],
            4096,
        )])
    }

    /// A request's payload (without the size prefix).
    fn payload<R: Request>(req: &R, version: i16) -> Vec<u8> {
        let header = RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: 3,
            client_id: Some("t".into()),
            ..Default::default()
        };
        request_frame_to_vec(&header, req).split_off(4)
    }

    fn handshake(gate: &mut SaslGate, users: &Users, mechanism: &str, v: i16) -> Verdict {
        let req = SaslHandshakeRequest {
            mechanism: mechanism.into(),
            ..Default::default()
        };
        gate.on_frame(users, &payload(&req, v))
    }

    fn authenticate(gate: &mut SaslGate, users: &Users, token: &[u8], v: i16) -> Verdict {
        let req = SaslAuthenticateRequest {
            auth_bytes: token.to_vec(),
            ..Default::default()
        };
        gate.on_frame(users, &payload(&req, v))
    }

    #[test]
    fn without_users_everything_passes() {
        let mut gate = SaslGate::new(&Users::default());
        assert!(gate.passes());
        assert_eq!(
            gate.on_frame(&Users::default(), &payload(&MetadataRequest::default(), 12)),
            Verdict::Serve
        );
        assert_eq!(gate.principal(), ANONYMOUS);
        assert_eq!(gate.max_frame(1 << 30), 1 << 30);
    }

    #[test]
    fn a_certificate_names_the_principal_only_without_sasl() {
        let cert = Some("User:CN=client".to_string());
        let gate = SaslGate::new(&Users::default()).with_certificate_principal(cert.clone());
        assert_eq!(gate.principal(), "User:CN=client");
        let users = users();
        let mut gate = SaslGate::new(&users).with_certificate_principal(cert);
        assert_eq!(gate.principal(), ANONYMOUS);
        handshake(&mut gate, &users, "PLAIN", 1);
        authenticate(&mut gate, &users, b"\0alice\0alice-pw", 2);
        assert_eq!(gate.principal(), "User:alice");
    }

    #[test]
    fn plain_then_requests_as_the_user() {
        let users = users();
        for v in 0..=2 {
            let mut gate = SaslGate::new(&users);
            assert_eq!(gate.max_frame(1 << 30), MAX_UNAUTHENTICATED_FRAME);
            // ApiVersions is served before the handshake.
            let av = payload(&ApiVersionsRequest::default(), 0);
            assert_eq!(gate.on_frame(&users, &av), Verdict::Serve);
            let Verdict::Answer(hs) = handshake(&mut gate, &users, "PLAIN", 1) else {
                panic!("no handshake answer")
            };
            let (_, hs) = decode_response_frame::<SaslHandshakeResponse>(&hs, 1).unwrap();
            assert_eq!(
                (hs.error_code, hs.mechanisms),
                (ErrorCode::NONE, vec!["PLAIN".to_string()])
            );
            let Verdict::Answer(a) = authenticate(&mut gate, &users, b"\0alice\0alice-pw", v)
            else {
                panic!("no authenticate answer")
            };
            let (h, a) = decode_response_frame::<SaslAuthenticateResponse>(&a, v).unwrap();
            assert_eq!((h.correlation_id, a.error_code), (3, ErrorCode::NONE));
            assert!(gate.passes());
            assert_eq!(gate.principal(), "User:alice");
        }
    }

    #[test]
    fn a_wrong_password_answers_and_closes_without_the_password() {
        let users = users();
        let mut gate = SaslGate::new(&users);
        handshake(&mut gate, &users, "PLAIN", 1);
        let Verdict::AnswerAndClose(a, reason) =
            authenticate(&mut gate, &users, b"\0alice\0guess-pw", 2)
        else {
            panic!("not refused")
        };
        let (_, a) = decode_response_frame::<SaslAuthenticateResponse>(&a, 2).unwrap();
        assert_eq!(a.error_code, ErrorCode::SASL_AUTHENTICATION_FAILED);
        assert_eq!(
            a.error_message.as_deref(),
            Some("Authentication failed: Invalid username or password")
        );
        assert!(!reason.contains("guess-pw"), "{reason}");
        assert!(!gate.passes());
        assert!(matches!(
            authenticate(&mut gate, &users, b"\0alice\0alice-pw", 2),
            Verdict::Close(_)
        ));
    }

    #[test]
    fn requests_before_authentication_close_the_connection() {
        let users = users();
        let mut gate = SaslGate::new(&users);
        let md = payload(&MetadataRequest::default(), 12);
        match gate.on_frame(&users, &md) {
            Verdict::Close(why) => assert!(why.contains("Metadata during SASL handshake"), "{why}"),
            other => panic!("{other:?}"),
        }
        let mut gate = SaslGate::new(&users);
        handshake(&mut gate, &users, "PLAIN", 1);
        match gate.on_frame(&users, &md) {
            Verdict::Close(why) => {
                assert!(why.contains("Metadata during SASL authentication"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        // Garbage, a truncated header, a truncated body.
        for bad in [
            &[][..],
            &[0, 17],
            &[0, 17, 0, 1, 0, 0, 0, 3, 0, 0, 0, 9, b'P'],
        ] {
            let mut gate = SaslGate::new(&users);
            assert!(
                matches!(gate.on_frame(&users, bad), Verdict::Close(_)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn an_unsupported_mechanism_lists_the_enabled_ones_and_closes() {
        let users = users();
        let mut gate = SaslGate::new(&users);
        let Verdict::AnswerAndClose(hs, why) = handshake(&mut gate, &users, "SCRAM-SHA-512", 1)
        else {
            panic!("not refused")
        };
        let (_, hs) = decode_response_frame::<SaslHandshakeResponse>(&hs, 1).unwrap();
        assert_eq!(hs.error_code, ErrorCode::UNSUPPORTED_SASL_MECHANISM);
        assert_eq!(hs.mechanisms, vec!["PLAIN".to_string()]);
        assert!(why.contains("SCRAM-SHA-512"), "{why}");
        // A long name is cut short in the log.
        let mut gate = SaslGate::new(&users);
        let long = "X".repeat(100_000);
        let Verdict::AnswerAndClose(_, why) = handshake(&mut gate, &users, &long, 1) else {
            panic!("not refused")
        };
        assert!(why.len() < 200, "{}", why.len());
    }

    #[test]
    fn after_a_v0_handshake_tokens_come_raw() {
        let users = users();
        let mut gate = SaslGate::new(&users);
        assert!(matches!(
            handshake(&mut gate, &users, "PLAIN", 0),
            Verdict::Answer(_)
        ));
        // The raw token, answered by an empty raw frame.
        assert_eq!(
            gate.on_frame(&users, b"\0alice\0alice-pw"),
            Verdict::Answer(vec![0, 0, 0, 0])
        );
        assert_eq!(gate.principal(), "User:alice");
        let mut gate = SaslGate::new(&users);
        handshake(&mut gate, &users, "PLAIN", 0);
        assert!(matches!(
            gate.on_frame(&users, b"\0alice\0no"),
            Verdict::Close(_)
        ));
    }

    /// A user for every mechanism (derived once: PBKDF2 is slow unoptimised).
    fn every_mechanism() -> &'static Users {
        static USERS: std::sync::OnceLock<Users> = std::sync::OnceLock::new();
        USERS.get_or_init(|| {
            Users::new(vec![User::new(
                "alice",
                "alice-pw",
                &SaslMechanism::ALL,
                4096,
            )])
        })
    }

    proptest::proptest! {
        /// Whatever a client sends, in whichever phase, the gate answers,
        /// serves or closes: it never panics.
        #[test]
        fn arbitrary_frames_never_panic(
            mechanism in 0usize..3,
            handshake_v0 in proptest::bool::ANY,
            first in "n,,n=alice,r=[ -~]{0,40}",
            frames in proptest::collection::vec(
                proptest::collection::vec(proptest::num::u8::ANY, 0..200),
                0..6,
            ),
        ) {
            let users = every_mechanism();
            let mut gate = SaslGate::new(users);
            let name = SaslMechanism::ALL[mechanism].name();
            handshake(&mut gate, users, name, if handshake_v0 { 0 } else { 1 });
            // A plausible first token, then anything, raw and wrapped.
            let _ = authenticate(&mut gate, users, first.as_bytes(), 2);
            for f in &frames {
                let _ = authenticate(&mut gate, users, f, 1);
                let _ = gate.on_frame(users, f);
            }
            let _ = gate.principal();
        }
    }
}
