//! The SASL users of a cluster file, as a broker keeps them: for SCRAM the
//! salted credentials (RFC 5802's StoredKey and ServerKey, as Kafka stores
//! them), for PLAIN a salted hash. The password itself is not kept, so it
//! cannot reach a log or `Debug` output.

use std::collections::HashMap;

use kdp_scram::{keys, Mechanism, ScramKeys};
use zeroize::Zeroizing;

/// A mechanism a user may authenticate with (Kafka's `sasl.enabled.mechanisms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaslMechanism {
    /// `PLAIN` (RFC 4616).
    Plain,
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    Scram(Mechanism),
}

impl SaslMechanism {
    /// Every mechanism the mock serves, in the order it lists them.
    pub const ALL: [SaslMechanism; 3] = [
        SaslMechanism::Plain,
        SaslMechanism::Scram(Mechanism::Sha256),
        SaslMechanism::Scram(Mechanism::Sha512),
    ];

    /// The name SaslHandshake carries.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::Scram(m) => m.name(),
        }
    }

    /// The mechanism named `name` (exactly, as Kafka compares them).
    pub fn from_name(name: &str) -> Option<SaslMechanism> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What a server keeps to check one user's SCRAM proofs and sign its answers.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The salt sent in server-first-message.
    pub salt: Vec<u8>,
    /// The iteration count sent in server-first-message.
    pub iterations: u32,
    /// H(ClientKey).
    pub stored_key: Zeroizing<Vec<u8>>,
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: Zeroizing<Vec<u8>>,
}

impl std::fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScramCredential")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

/// One user.
#[derive(Clone, PartialEq, Eq)]
pub struct User {
    /// The SASL user name; the principal is `User:<name>`.
    pub name: String,
    plain: Option<(Vec<u8>, Zeroizing<Vec<u8>>)>,
    scram: Vec<(Mechanism, ScramCredential)>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("name", &self.name)
            .field("mechanisms", &self.mechanisms())
            .finish_non_exhaustive()
    }
}

fn random_salt() -> Vec<u8> {
    let mut salt = vec![0u8; 16];
    // Without randomness the salt stays zero: still a working mock.
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut salt);
    salt
}

fn plain_digest(salt: &[u8], password: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut input = Zeroizing::new(Vec::with_capacity(salt.len() + password.len()));
    input.extend_from_slice(salt);
    input.extend_from_slice(password);
    keys::hash(Mechanism::Sha512, &input)
}

impl User {
    /// A user who may authenticate with `mechanisms` using `password`;
    /// SCRAM credentials are derived with `iterations` and a random salt.
    pub fn new(name: &str, password: &str, mechanisms: &[SaslMechanism], iterations: u32) -> User {
        let mut user = User {
            name: name.to_string(),
            plain: None,
            scram: Vec::new(),
        };
        for m in mechanisms {
            match *m {
                SaslMechanism::Plain => {
                    let salt = random_salt();
                    let digest = plain_digest(&salt, password.as_bytes());
                    user.plain = Some((salt, digest));
                }
                SaslMechanism::Scram(m) => {
                    let salt = random_salt();
                    let k = ScramKeys::derive(m, password.as_bytes(), &salt, iterations);
                    user.scram.push((
                        m,
                        ScramCredential {
                            salt,
                            iterations,
                            stored_key: k.stored_key,
                            server_key: k.server_key,
                        },
                    ));
                }
            }
        }
        user
    }

    /// The mechanisms this user may use.
    pub fn mechanisms(&self) -> Vec<SaslMechanism> {
        let plain = self.plain.as_ref().map(|_| SaslMechanism::Plain);
        plain
            .into_iter()
            .chain(self.scram.iter().map(|(m, _)| SaslMechanism::Scram(*m)))
            .collect()
    }

    /// Whether PLAIN is enabled for this user and `password` is theirs.
    pub fn plain_password_matches(&self, password: &[u8]) -> bool {
        match &self.plain {
            Some((salt, digest)) => keys::ct_eq(&plain_digest(salt, password), digest),
            None => false,
        }
    }

    /// The credential for SCRAM with `mechanism`, if enabled for this user.
    pub fn scram(&self, mechanism: Mechanism) -> Option<&ScramCredential> {
        self.scram
            .iter()
            .find(|(m, _)| *m == mechanism)
            .map(|(_, c)| c)
    }
}

/// The users of a cluster; none means the listeners do not use SASL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Users {
    users: Vec<User>,
    by_name: HashMap<String, usize>,
}

impl Users {
    /// Users from a list; a later user of the same name is ignored (the
    /// cluster file refuses duplicates before this).
    pub fn new(users: Vec<User>) -> Users {
        let mut by_name = HashMap::with_capacity(users.len());
        for (i, u) in users.iter().enumerate() {
            by_name.entry(u.name.clone()).or_insert(i);
        }
        Users { users, by_name }
    }

    /// Whether any user is configured, i.e. whether clients must authenticate.
    pub fn is_enabled(&self) -> bool {
        !self.users.is_empty()
    }

    /// A user by name.
    pub fn get(&self, name: &str) -> Option<&User> {
        self.by_name.get(name).and_then(|&i| self.users.get(i))
    }

    /// The mechanisms some user may use, in [`SaslMechanism::ALL`]'s order:
    /// what SaslHandshake offers.
    pub fn enabled_mechanisms(&self) -> Vec<SaslMechanism> {
        SaslMechanism::ALL
            .into_iter()
            .filter(|m| self.users.iter().any(|u| u.mechanisms().contains(m)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_check_the_password_and_hide_it() {
        let u = User::new(
            "alice",
            "alice-pw",
            &[
                SaslMechanism::Plain,
                SaslMechanism::Scram(Mechanism::Sha512),
            ],
            4096,
        );
        assert!(u.plain_password_matches(b"alice-pw"));
        assert!(!u.plain_password_matches(b"alice-pw "));
        assert!(u.scram(Mechanism::Sha512).is_some());
        assert!(u.scram(Mechanism::Sha256).is_none());
        let users = Users::new(vec![u.clone()]);
        assert!(!format!("{users:?}").contains("alice-pw"));
        assert_eq!(
            users.enabled_mechanisms(),
            vec![
                SaslMechanism::Plain,
                SaslMechanism::Scram(Mechanism::Sha512)
            ]
        );
        let scram_only = User::new(
            "bob",
            "pw",
            &[SaslMechanism::Scram(Mechanism::Sha256)],
            4096,
        );
        assert!(!scram_only.plain_password_matches(b"pw"));
    }
}
