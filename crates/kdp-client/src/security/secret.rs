//! Values that must never be shown: passwords, private keys, tokens,
//! client secrets.

use std::fmt;

use zeroize::Zeroize;

/// A secret string. `Debug` and `Display` print `[redacted]`; the memory is
/// zeroed on drop. The only way to the text is [`Secret::expose`], whose
/// callers hand it to the wire or a parser, never to a formatter.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a password, key or token so that it is redacted when formatted and zeroed on drop.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The secret text, for the wire or a key parser only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is empty, e.g. to reject a blank `sasl.password` without exposing it.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_string())
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Secret bytes (SASL tokens, decoded keys), zeroed on drop.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretBytes(Vec<u8>);

impl SecretBytes {
    /// Wraps secret bytes so that they are redacted when formatted and zeroed on drop.
    pub fn new(b: Vec<u8>) -> Self {
        SecretBytes(b)
    }

    /// The secret bytes, for the wire or a key parser only.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for SecretBytes {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for SecretBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[redacted {} bytes]", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        let s = Secret::new("hunter2");
        assert_eq!(
            format!("{s} {s:?} {s:#?}"),
            "[redacted] [redacted] [redacted]"
        );
        let wrapped = Some(vec![s.clone()]);
        assert!(!format!("{wrapped:?}").contains("hunter2"));
        assert_eq!(s.expose(), "hunter2");
        let b = SecretBytes::new(b"hunter2".to_vec());
        assert!(!format!("{b:?}").contains("hunter2"));
    }
}
