//! What a password becomes (RFC 5802 section 3): SaltedPassword, ClientKey,
//! StoredKey and ServerKey; and the proof and signature over an AuthMessage.
//! A server stores only StoredKey and ServerKey: they check a proof and sign
//! an answer, but cannot make a proof.

use std::num::NonZeroU32;

use ring::{digest, hmac, pbkdf2};
use zeroize::Zeroizing;

use crate::mechanism::Mechanism;

/// The keys derived from one password, salt and iteration count.
pub struct ScramKeys {
    /// HMAC(SaltedPassword, "Client Key"): only the client holds it.
    pub client_key: Zeroizing<Vec<u8>>,
    /// H(ClientKey): what a server stores to check proofs.
    pub stored_key: Zeroizing<Vec<u8>>,
    /// HMAC(SaltedPassword, "Server Key"): what a server signs with.
    pub server_key: Zeroizing<Vec<u8>>,
}

impl std::fmt::Debug for ScramKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScramKeys([redacted])")
    }
}

impl ScramKeys {
    /// Hi(password, salt, i) and the keys from it. An iteration count of 0
    /// counts as 1 (callers bound the count before this).
    pub fn derive(mechanism: Mechanism, password: &[u8], salt: &[u8], iterations: u32) -> Self {
        let rounds = NonZeroU32::new(iterations).unwrap_or(NonZeroU32::MIN);
        let mut salted = Zeroizing::new(vec![0u8; mechanism.hash_len()]);
        pbkdf2::derive(mechanism.pbkdf2(), rounds, salt, password, &mut salted);
        let key = hmac::Key::new(mechanism.hmac(), &salted);
        let client_key = Zeroizing::new(hmac::sign(&key, b"Client Key").as_ref().to_vec());
        let stored_key = Zeroizing::new(
            digest::digest(mechanism.digest(), &client_key)
                .as_ref()
                .to_vec(),
        );
        let server_key = Zeroizing::new(hmac::sign(&key, b"Server Key").as_ref().to_vec());
        ScramKeys {
            client_key,
            stored_key,
            server_key,
        }
    }
}

/// HMAC(key, auth_message): ClientSignature with StoredKey, ServerSignature with ServerKey.
pub fn sign(mechanism: Mechanism, key: &[u8], auth_message: &[u8]) -> Zeroizing<Vec<u8>> {
    let key = hmac::Key::new(mechanism.hmac(), key);
    Zeroizing::new(hmac::sign(&key, auth_message).as_ref().to_vec())
}

/// H(bytes): the server recovers StoredKey from a proof's ClientKey with it.
pub fn hash(mechanism: Mechanism, bytes: &[u8]) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(digest::digest(mechanism.digest(), bytes).as_ref().to_vec())
}

/// `a XOR b`, as long as the shorter of the two: ClientProof from ClientKey
/// and ClientSignature, and ClientKey back from ClientProof.
pub fn xor(a: &[u8], b: &[u8]) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(a.iter().zip(b).map(|(x, y)| x ^ y).collect())
}

/// Equality whose time does not depend on where the inputs first differ.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD as B64;
    use base64::Engine;

    /// RFC 7677 section 3: the proof and signature of its example exchange.
    #[test]
    fn rfc7677_proof_and_signature() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let keys = ScramKeys::derive(Mechanism::Sha256, b"pencil", &salt, 4096);
        let auth = "n=user,r=rOprNGfwEbeRWgbNEkqO,\
                    r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,\
                    c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
        let client_sig = sign(Mechanism::Sha256, &keys.stored_key, auth.as_bytes());
        let proof = xor(&keys.client_key, &client_sig);
        assert_eq!(
            B64.encode(&proof[..]),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        let server_sig = sign(Mechanism::Sha256, &keys.server_key, auth.as_bytes());
        assert_eq!(
            B64.encode(&server_sig[..]),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
        // The server's check: H(proof XOR ClientSignature) == StoredKey.
        let client_key = xor(&proof, &client_sig);
        assert!(ct_eq(
            &hash(Mechanism::Sha256, &client_key),
            &keys.stored_key
        ));
        assert!(!format!("{keys:?}").contains(&B64.encode(&keys.stored_key[..])));
    }

    #[test]
    fn ct_eq_compares_length_and_bytes() {
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
        assert!(ct_eq(b"", b""));
    }
}
