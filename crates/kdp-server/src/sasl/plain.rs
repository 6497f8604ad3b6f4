//! PLAIN (RFC 4616) on the server, as Kafka's `PlainSaslServer` checks it:
//! `[authzid] NUL authcid NUL passwd`, the authzid empty or the user name.

use super::users::Users;

/// Why a PLAIN token was refused; the message is the one Kafka sends the
/// client (it never holds the password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainFailure(pub &'static str);

/// The user a PLAIN token authenticates.
pub fn authenticate(users: &Users, token: &[u8]) -> Result<String, PlainFailure> {
    let mut parts = token.split(|&b| b == 0);
    let (Some(authzid), Some(user), Some(password), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(PlainFailure(
            "Invalid SASL/PLAIN response: expected 3 tokens",
        ));
    };
    let Ok(user) = std::str::from_utf8(user) else {
        return Err(PlainFailure(
            "Authentication failed: Invalid username or password",
        ));
    };
    if user.is_empty() {
        return Err(PlainFailure(
            "Authentication failed: username not specified",
        ));
    }
    if password.is_empty() {
        return Err(PlainFailure(
            "Authentication failed: password not specified",
        ));
    }
    if !authzid.is_empty() && authzid != user.as_bytes() {
        return Err(PlainFailure(
            "Authentication failed: Client requested an authorization id that is different from username",
        ));
    }
    match users.get(user) {
        Some(u) if u.plain_password_matches(password) => Ok(user.to_string()),
        _ => Err(PlainFailure(
            "Authentication failed: Invalid username or password",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sasl::users::{SaslMechanism, User};

    #[test]
    fn tokens_are_checked_like_kafka() {
        let users = Users::new(vec![User::new(
            "alice",
            "pw",
            &[SaslMechanism::Plain],
            4096,
        )]);
        assert_eq!(authenticate(&users, b"\0alice\0pw").as_deref(), Ok("alice"));
        assert_eq!(
            authenticate(&users, b"alice\0alice\0pw").as_deref(),
            Ok("alice")
        );
        for (token, want) in [
            (&b"\0alice\0nope"[..], "Invalid username or password"),
            (b"\0bob\0pw", "Invalid username or password"),
            (b"\0alice", "expected 3 tokens"),
            (b"", "expected 3 tokens"),
            (b"\0alice\0pw\0", "expected 3 tokens"),
            (b"\0\0pw", "username not specified"),
            (b"\0alice\0", "password not specified"),
            (b"bob\0alice\0pw", "authorization id"),
            (b"\0\xff\0pw", "Invalid username or password"),
        ] {
            let e = authenticate(&users, token).unwrap_err();
            assert!(e.0.contains(want), "{token:?}: {e:?}");
        }
    }
}
