//! [`Uuid`]: Kafka's 16-byte ids (topic ids), printed as Kafka prints them.

/// A 16-byte UUID (topic ids).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero id, which Kafka uses for "no topic id".
    pub const ZERO: Uuid = Uuid([0; 16]);
}

impl std::fmt::Display for Uuid {
    /// Kafka prints topic ids as URL-safe base64 without padding.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::with_capacity(22);
        for chunk in self.0.chunks(3) {
            let mut n: u32 = 0;
            for (i, b) in chunk.iter().enumerate() {
                n |= u32::from(*b) << (16 - 8 * i);
            }
            let chars = chunk.len() + 1;
            for i in 0..chars {
                let idx = ((n >> (18 - 6 * i)) & 0x3f) as usize;
                out.push(char::from(ALPHABET[idx]));
            }
        }
        f.write_str(&out)
    }
}
