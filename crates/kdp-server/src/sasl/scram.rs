//! The server side of one SCRAM-SHA-256/512 exchange (RFC 5802, RFC 7677),
//! without I/O, as Kafka's `ScramSaslServer` runs it: client-first-message
//! in, server-first-message out; client-final-message in, the proof
//! checked, server-final-message out.
//!
//! Every message is client input: it is parsed with checked splits only,
//! and any flaw fails the exchange with a [`ScramFailure`] that names it.
//! Kafka tells the client only that its credentials were invalid (the
//! reasons stay in the broker's log), and so does the mock.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use kdp_scram::message::{attributes, unescape_saslname};
use kdp_scram::{keys, Mechanism};

use super::users::{ScramCredential, Users};

/// The longest SCRAM message taken. Real ones are about 100 bytes (a
/// user name, a nonce, a proof); anything longer is refused before it is
/// parsed, and a name quoted in the log is therefore short too.
pub const MAX_MESSAGE: usize = 1024;

/// Why an exchange failed; never holds a secret or a proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramFailure(pub String);

fn fail<T>(why: impl Into<String>) -> Result<T, ScramFailure> {
    Err(ScramFailure(why.into()))
}

/// Where an exchange stands.
#[derive(Debug)]
pub enum ScramServer {
    /// Waiting for client-first-message.
    First {
        /// The mechanism SaslHandshake chose.
        mechanism: Mechanism,
    },
    /// server-first-message sent; waiting for client-final-message.
    Final {
        /// The mechanism SaslHandshake chose.
        mechanism: Mechanism,
        /// The user named in client-first-message.
        user: String,
        /// The user's credential (cloned: the exchange outlives no lock).
        credential: ScramCredential,
        /// The gs2 header (`n,,` or `y,,`), which `c=` must repeat in base64.
        gs2_header: String,
        /// client-first-message-bare, ",", server-first-message: the AuthMessage's first part.
        auth_prefix: String,
        /// The client's nonce followed by the server's.
        nonce: String,
    },
    /// Done, successfully or not: nothing more is accepted.
    Over,
}

/// What a step produced.
#[derive(Debug, PartialEq, Eq)]
pub enum ScramStep {
    /// server-first-message: send it and wait for client-final-message.
    Challenge(Vec<u8>),
    /// server-final-message: `user` is authenticated.
    Success {
        /// The authenticated user name.
        user: String,
        /// server-final-message (`v=<ServerSignature>`).
        server_final: Vec<u8>,
    },
}

/// A nonce is printable ASCII without `,` (RFC 5802 section 7).
fn valid_nonce(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b',')
}

impl ScramServer {
    /// An exchange for `mechanism`, waiting for client-first-message.
    pub fn new(mechanism: Mechanism) -> Self {
        ScramServer::First { mechanism }
    }

    /// Takes the next client message. `server_nonce` is used for the first
    /// one only (random in the mock, fixed in tests). After a failure or
    /// success the exchange is over and refuses more.
    pub fn step(
        &mut self,
        users: &Users,
        message: &[u8],
        server_nonce: &str,
    ) -> Result<ScramStep, ScramFailure> {
        let state = std::mem::replace(self, ScramServer::Over);
        if message.len() > MAX_MESSAGE {
            return fail(format!(
                "a SCRAM message of {} bytes, above {MAX_MESSAGE}",
                message.len()
            ));
        }
        match state {
            ScramServer::First { mechanism } => {
                let (next, challenge) = client_first(mechanism, users, message, server_nonce)?;
                *self = next;
                Ok(ScramStep::Challenge(challenge))
            }
            ScramServer::Final {
                mechanism,
                user,
                credential,
                gs2_header,
                auth_prefix,
                nonce,
            } => {
                let server_final = client_final(
                    mechanism,
                    &credential,
                    &gs2_header,
                    &auth_prefix,
                    &nonce,
                    message,
                )?;
                Ok(ScramStep::Success { user, server_final })
            }
            ScramServer::Over => fail("a SCRAM message after the exchange ended"),
        }
    }
}

fn client_first(
    mechanism: Mechanism,
    users: &Users,
    message: &[u8],
    server_nonce: &str,
) -> Result<(ScramServer, Vec<u8>), ScramFailure> {
    let text =
        std::str::from_utf8(message).or_else(|_| fail("the client-first-message is not UTF-8"))?;
    // gs2-header: cbind flag "," [authzid] ","
    let Some((flag, rest)) = text.split_once(',') else {
        return fail("the client-first-message has no gs2 header");
    };
    match flag {
        "n" | "y" => {}
        f if f.starts_with("p=") => {
            return fail("the client asks for channel binding, which Kafka does not offer")
        }
        _ => return fail("the client-first-message's gs2 header does not start with n, y or p="),
    }
    let Some((authzid, bare)) = rest.split_once(',') else {
        return fail("the client-first-message's gs2 header has no authzid field");
    };
    let gs2_header = format!("{flag},{authzid},");
    let mut parts = attributes(bare);
    let user = match parts.next().flatten() {
        Some(('n', name)) => unescape_saslname(name)
            .ok_or_else(|| ScramFailure("the user name is not a valid saslname".into()))?,
        _ => return fail("the client-first-message-bare does not start with n="),
    };
    let client_nonce = match parts.next().flatten() {
        Some(('r', n)) if valid_nonce(n) => n,
        Some(('r', _)) => return fail("the client nonce is empty or not printable"),
        _ => return fail("the client-first-message-bare has no r= after n="),
    };
    // Extensions (Kafka's tokenauth=true, ...) are k=v pairs; a mandatory one (m=) cannot be honoured.
    if parts.any(|p| matches!(p, Some(('m', _)))) {
        return fail("the client requires a mandatory SCRAM extension");
    }
    if let Some(a) = authzid.strip_prefix("a=") {
        if unescape_saslname(a).as_deref() != Some(user.as_str()) {
            return fail("the authorization id differs from the user name");
        }
    } else if !authzid.is_empty() {
        return fail("the gs2 header's authzid is neither empty nor a=");
    }
    let Some(credential) = users.get(&user).and_then(|u| u.scram(mechanism)) else {
        return fail(format!(
            "no user {user:?} with {} credentials",
            mechanism.name()
        ));
    };
    let nonce = format!("{client_nonce}{server_nonce}");
    let server_first = format!(
        "r={nonce},s={},i={}",
        B64.encode(&credential.salt),
        credential.iterations
    );
    let auth_prefix = format!("{bare},{server_first}");
    Ok((
        ScramServer::Final {
            mechanism,
            user,
            credential: credential.clone(),
            gs2_header,
            auth_prefix,
            nonce,
        },
        server_first.into_bytes(),
    ))
}

fn client_final(
    mechanism: Mechanism,
    credential: &ScramCredential,
    gs2_header: &str,
    auth_prefix: &str,
    nonce: &str,
    message: &[u8],
) -> Result<Vec<u8>, ScramFailure> {
    let text =
        std::str::from_utf8(message).or_else(|_| fail("the client-final-message is not UTF-8"))?;
    // The proof is the last attribute; what precedes it is signed.
    let Some((without_proof, proof)) = text.rsplit_once(",p=") else {
        return fail("the client-final-message has no proof (p=)");
    };
    let mut parts = attributes(without_proof);
    match parts.next().flatten() {
        Some(('c', c)) if c == B64.encode(gs2_header) => {}
        Some(('c', _)) => return fail("the channel binding (c=) does not repeat the gs2 header"),
        _ => return fail("the client-final-message does not start with c="),
    }
    match parts.next().flatten() {
        Some(('r', r)) if r == nonce => {}
        Some(('r', _)) => {
            return fail("the nonce of the client-final-message is not the one the server sent")
        }
        _ => return fail("the client-final-message has no r= after c="),
    }
    let proof = B64
        .decode(proof)
        .or_else(|_| fail("the client proof is not base64"))?;
    if proof.len() != mechanism.hash_len() {
        return fail(format!(
            "the client proof has {} bytes, not {}",
            proof.len(),
            mechanism.hash_len()
        ));
    }
    let auth_message = format!("{auth_prefix},{without_proof}");
    let client_sig = keys::sign(mechanism, &credential.stored_key, auth_message.as_bytes());
    let client_key = keys::xor(&proof, &client_sig);
    if !keys::ct_eq(&keys::hash(mechanism, &client_key), &credential.stored_key) {
        return fail("the client proof is wrong (wrong password)");
    }
    let server_sig = keys::sign(mechanism, &credential.server_key, auth_message.as_bytes());
    Ok(format!("v={}", B64.encode(&server_sig[..])).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sasl::users::{SaslMechanism, User};

    /// One user with both SCRAM credentials (derived once: PBKDF2 is slow unoptimised).
    fn users() -> Users {
        static USERS: std::sync::OnceLock<Users> = std::sync::OnceLock::new();
        USERS.get_or_init(make_users).clone()
    }

    fn make_users() -> Users {
        Users::new(vec![User::new(
            "a,b=c",
            "pencil",
            &[
                SaslMechanism::Scram(Mechanism::Sha256),
                SaslMechanism::Scram(Mechanism::Sha512),
            ],
            4096,
        )])
    }

    /// The client's side, computed here with the shared arithmetic.
    fn client_final_for(
        mechanism: Mechanism,
        password: &str,
        client_first_bare: &str,
        server_first: &str,
    ) -> String {
        let attrs: Vec<_> = attributes(server_first).flatten().collect();
        let get = |k| {
            attrs
                .iter()
                .find(|(c, _)| *c == k)
                .map(|(_, v)| *v)
                .unwrap()
        };
        let salt = B64.decode(get('s')).unwrap();
        let keys_ = kdp_scram::ScramKeys::derive(
            mechanism,
            password.as_bytes(),
            &salt,
            get('i').parse().unwrap(),
        );
        let without_proof = format!("c=biws,r={}", get('r'));
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let sig = keys::sign(mechanism, &keys_.stored_key, auth.as_bytes());
        let proof = keys::xor(&keys_.client_key, &sig);
        format!("{without_proof},p={}", B64.encode(&proof[..]))
    }

    fn first(s: &mut ScramServer, users: &Users, msg: &str) -> String {
        match s.step(users, msg.as_bytes(), "SRV").unwrap() {
            ScramStep::Challenge(c) => String::from_utf8(c).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_right_password_authenticates_with_both_hashes() {
        let users = users();
        for m in Mechanism::ALL {
            let mut s = ScramServer::new(m);
            let server_first = first(&mut s, &users, "n,,n=a=2Cb=3Dc,r=CLI");
            assert!(server_first.starts_with("r=CLISRV,s="), "{server_first}");
            let fin = client_final_for(m, "pencil", "n=a=2Cb=3Dc,r=CLI", &server_first);
            match s.step(&users, fin.as_bytes(), "unused").unwrap() {
                ScramStep::Success { user, server_final } => {
                    assert_eq!(user, "a,b=c");
                    assert!(server_final.starts_with(b"v="));
                }
                other => panic!("{other:?}"),
            }
            // Over: nothing more.
            assert!(s.step(&users, fin.as_bytes(), "x").is_err());
        }
    }

    fn final_failure(fin: impl Fn(&str) -> String) -> String {
        let users = users();
        let mut s = ScramServer::new(Mechanism::Sha512);
        let server_first = first(&mut s, &users, "n,,n=a=2Cb=3Dc,r=CLI");
        let msg = fin(&server_first);
        s.step(&users, msg.as_bytes(), "x").unwrap_err().0
    }

    #[test]
    fn a_wrong_proof_fails() {
        let e = final_failure(|sf| {
            client_final_for(Mechanism::Sha512, "pencil2", "n=a=2Cb=3Dc,r=CLI", sf)
        });
        assert!(e.contains("proof is wrong"), "{e}");
    }

    #[test]
    fn a_final_message_with_another_nonce_fails() {
        // Signed correctly, but over a nonce the server did not send.
        let e = final_failure(|sf| {
            let forged = sf.replace("r=CLISRV", "r=CLIXYZ");
            client_final_for(Mechanism::Sha512, "pencil", "n=a=2Cb=3Dc,r=CLI", &forged)
        });
        assert!(e.contains("nonce"), "{e}");
    }

    #[test]
    fn garbage_and_truncated_final_messages_fail_by_name() {
        let good = {
            let users = users();
            let mut s = ScramServer::new(Mechanism::Sha512);
            let sf = first(&mut s, &users, "n,,n=a=2Cb=3Dc,r=CLI");
            client_final_for(Mechanism::Sha512, "pencil", "n=a=2Cb=3Dc,r=CLI", &sf)
        };
        // Every prefix of a valid final message fails (the nonce and the
        // proof are random, so compare by shape only), without a panic.
        for cut in 0..good.len() {
            let prefix = good[..cut].to_string();
            let e = final_failure(move |_| prefix.clone());
            assert!(!e.is_empty());
        }
        for (msg, want) in [
            ("c=biws,r=CLISRV,p=!!", "not base64"),
            ("c=biws,r=CLISRV,p=AAAA", "has 3 bytes"),
            ("c=eSws,r=CLISRV,p=AAAA", "channel binding"),
            ("r=CLISRV,p=AAAA", "does not start with c="),
            ("c=biws,p=AAAA", "no r="),
            ("c=biws,r=CLISRV", "no proof"),
        ] {
            let e = final_failure(|_| msg.to_string());
            assert!(e.contains(want), "{msg}: {e}");
        }
        let users = users();
        let mut s = ScramServer::new(Mechanism::Sha512);
        first(&mut s, &users, "n,,n=a=2Cb=3Dc,r=CLI");
        let e = s.step(&users, &[0xff, 0xfe], "x").unwrap_err();
        assert!(e.0.contains("not UTF-8"), "{e:?}");
        // A huge message is refused unread, and ends the exchange.
        let mut s = ScramServer::new(Mechanism::Sha512);
        let huge = format!("n,,n={},r=1", "u".repeat(MAX_MESSAGE));
        let e = s.step(&users, huge.as_bytes(), "x").unwrap_err();
        assert!(e.0.contains("above 1024"), "{e:?}");
        assert!(s.step(&users, b"n,,n=a=2Cb=3Dc,r=CLI", "x").is_err());
    }

    #[test]
    fn hostile_first_messages_fail_by_name() {
        let users = users();
        for (msg, want) in [
            ("", "no gs2 header"),
            ("n", "no gs2 header"),
            ("n,", "no authzid"),
            ("p=tls-unique,,n=x,r=1", "channel binding"),
            ("q,,n=x,r=1", "does not start with n, y or p="),
            ("n,,r=1", "does not start with n="),
            ("n,,n=a=2Cb=3Dc", "no r="),
            ("n,,n=a=2Cb=3Dc,r=", "nonce is empty"),
            ("n,,n=a=2Cb=3Dc,r=a b", "not printable"),
            ("n,,n=a=4,r=1", "not a valid saslname"),
            ("n,,n=a=2Cb=3Dc,r=1,m=ext", "mandatory"),
            ("n,a=bob,n=a=2Cb=3Dc,r=1", "authorization id"),
            ("n,zz,n=a=2Cb=3Dc,r=1", "authzid"),
            ("n,,n=nobody,r=1", "no user \"nobody\""),
        ] {
            let mut s = ScramServer::new(Mechanism::Sha256);
            let e = s.step(&users, msg.as_bytes(), "SRV").unwrap_err();
            assert!(e.0.contains(want), "{msg:?}: {e:?}");
        }
        // A user without SCRAM-SHA-512 credentials is unknown to that mechanism.
        let only256 = Users::new(vec![User::new(
            "u",
            "p",
            &[SaslMechanism::Scram(Mechanism::Sha256)],
            4096,
        )]);
        let mut s = ScramServer::new(Mechanism::Sha512);
        assert!(s.step(&only256, b"n,,n=u,r=1", "S").is_err());
        // Extensions Kafka clients send (tokenauth) are accepted and ignored.
        let mut s = ScramServer::new(Mechanism::Sha256);
        first(&mut s, &users, "n,,n=a=2Cb=3Dc,r=CLI,tokenauth=true");
        let mut s = ScramServer::new(Mechanism::Sha256);
        first(&mut s, &users, "n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=CLI");
    }
}
