//! SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), client side,
//! without I/O: [`ScramClient::first`] gives the first message,
//! [`ScramClient::respond`] answers the server's first message, and
//! [`ScramClient::verify`] checks the server's signature in its final one.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use kdp_scram::message::{attributes, escape_saslname};
use kdp_scram::{keys, ScramKeys, MAX_ITERATIONS, MIN_ITERATIONS};

use super::config::ScramMechanism;
use super::secret::{Secret, SecretBytes};

/// Why a SCRAM exchange failed. Holds no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramError(pub String);

impl std::fmt::Display for ScramError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn fail<T>(s: impl Into<String>) -> Result<T, ScramError> {
    Err(ScramError(s.into()))
}

/// The client side of one SCRAM-SHA-256/512 exchange (RFC 5802), used once per connection.
pub struct ScramClient {
    mechanism: ScramMechanism,
    password: Secret,
    client_nonce: String,
    client_first_bare: String,
    /// Set by [`ScramClient::respond`].
    server_signature: Option<SecretBytes>,
}

impl std::fmt::Debug for ScramClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramClient")
            .field("mechanism", &self.mechanism)
            .finish_non_exhaustive()
    }
}

impl ScramClient {
    /// A client with a fresh random nonce.
    pub fn new(
        mechanism: ScramMechanism,
        username: &str,
        password: Secret,
    ) -> Result<Self, ScramError> {
        let mut raw = [0u8; 24];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut raw)
            .map_err(|_| ScramError("no randomness for the SCRAM nonce".into()))?;
        Ok(Self::with_nonce(
            mechanism,
            username,
            password,
            B64.encode(raw),
        ))
    }

    fn with_nonce(
        mechanism: ScramMechanism,
        username: &str,
        password: Secret,
        nonce: String,
    ) -> Self {
        ScramClient {
            mechanism,
            password,
            client_first_bare: format!("n={},r={nonce}", escape_saslname(username)),
            client_nonce: nonce,
            server_signature: None,
        }
    }

    /// client-first-message: no channel binding, no authzid.
    pub fn first(&self) -> Vec<u8> {
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    /// The client-final-message (with the proof) for the server-first-message.
    pub fn respond(&mut self, server_first: &[u8]) -> Result<SecretBytes, ScramError> {
        let server_first = std::str::from_utf8(server_first)
            .or_else(|_| fail("the server's first message is not UTF-8"))?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attr in attributes(server_first).flatten() {
            match attr {
                ('r', v) => nonce = Some(v),
                ('s', v) => salt = Some(v),
                ('i', v) => iterations = Some(v),
                ('e', v) => return fail(format!("the server refused: {v}")),
                ('m', _) => return fail("the server requires a SCRAM extension kdp does not know"),
                _ => {}
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return fail("the server's first message lacks r=, s= or i=");
        };
        if !nonce.starts_with(&self.client_nonce) || nonce.len() == self.client_nonce.len() {
            return fail("the server's nonce does not extend the client's");
        }
        let salt = B64
            .decode(salt)
            .or_else(|_| fail("the server's salt is not base64"))?;
        let iterations: u32 = iterations
            .parse()
            .or_else(|_| fail("the server's iteration count is not a number"))?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return fail(format!(
                "the server asks for {iterations} iterations, outside {MIN_ITERATIONS}..={MAX_ITERATIONS}"
            ));
        }
        let keys = ScramKeys::derive(
            self.mechanism,
            self.password.expose().as_bytes(),
            &salt,
            iterations,
        );
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_sig = keys::sign(self.mechanism, &keys.stored_key, auth_message.as_bytes());
        let proof = keys::xor(&keys.client_key, &client_sig);
        let server_sig = keys::sign(self.mechanism, &keys.server_key, auth_message.as_bytes());
        self.server_signature = Some(SecretBytes::new(server_sig.to_vec()));
        Ok(SecretBytes::new(
            format!("{without_proof},p={}", B64.encode(&proof[..])).into_bytes(),
        ))
    }
    /// Checks the server-final-message: the server proves it knows the password too.
    pub fn verify(&self, server_final: &[u8]) -> Result<(), ScramError> {
        let text = std::str::from_utf8(server_final)
            .or_else(|_| fail("the server's final message is not UTF-8"))?;
        let Some(expected) = &self.server_signature else {
            return fail("the server's final message came before its first");
        };
        for attr in attributes(text).flatten() {
            match attr {
                ('e', v) => return fail(format!("the server refused: {v}")),
                ('v', v) => {
                    let got = B64
                        .decode(v)
                        .or_else(|_| fail("the server's signature is not base64"))?;
                    return if keys::ct_eq(&got, expected.expose()) {
                        Ok(())
                    } else {
                        fail("the server's signature is wrong: it does not know the password (a rogue broker?)")
                    };
                }
                _ => {}
            }
        }
        fail("the server's final message has no signature")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exchange of RFC 7677 section 3.
    #[test]
    fn rfc7677_sha256_example() {
        let mut c = ScramClient::with_nonce(
            ScramMechanism::Sha256,
            "user",
            Secret::new("pencil"),
            "rOprNGfwEbeRWgbNEkqO".into(),
        );
        assert_eq!(c.first(), b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first =
            b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = c.respond(server_first).unwrap();
        assert_eq!(
            std::str::from_utf8(fin.expose()).unwrap(),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        c.verify(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        let e = c
            .verify(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(e.0.contains("signature is wrong"), "{e}");
        assert!(!format!("{c:?}").contains("pencil"));
    }

    #[test]
    fn hostile_server_first_messages_are_refused() {
        let mut c = ScramClient::with_nonce(
            ScramMechanism::Sha512,
            "a,b=c",
            Secret::new("pw"),
            "abc".into(),
        );
        assert_eq!(c.first(), b"n,,n=a=2Cb=3Dc,r=abc");
        for (msg, want) in [
            ("r=xyz1,s=AAAA,i=4096", "does not extend"),
            ("r=abc,s=AAAA,i=4096", "does not extend"),
            ("r=abcd,s=AAAA,i=4095", "outside"),
            ("r=abcd,s=AAAA,i=4294967295", "outside"),
            ("r=abcd,s=!!,i=4096", "not base64"),
            ("r=abcd,s=AAAA", "lacks"),
            ("e=other-error", "refused"),
        ] {
            let e = c.respond(msg.as_bytes()).unwrap_err();
            assert!(e.0.contains(want), "{msg}: {e}");
        }
        assert!(
            c.verify(b"v=AAAA").is_err(),
            "no signature before the first message"
        );
    }
}
