//! Hex text for bytes (`kdp decode --hex`, tagged-field JSON). Whitespace
//! between digits is ignored so that dumps can be pasted as they are.

/// Lowercase hex of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Why hex text was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// A character that is neither a hex digit nor ASCII whitespace.
    #[error("invalid hex digit {found:?} at character {position}")]
    InvalidDigit {
        /// The offending character.
        found: char,
        /// Its byte offset in the text.
        position: usize,
    },
    /// Digits that do not pair up into bytes.
    #[error("odd number of hex digits")]
    OddLength,
}

/// Bytes from hex text, ignoring ASCII whitespace.
pub fn decode(text: &str) -> Result<Vec<u8>, HexError> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for (position, c) in text.char_indices() {
        if c.is_ascii_whitespace() {
            continue;
        }
        let Some(nibble) = c.to_digit(16) else {
            return Err(HexError::InvalidDigit { found: c, position });
        };
        let nibble = nibble as u8;
        match high.take() {
            None => high = Some(nibble),
            Some(h) => out.push((h << 4) | nibble),
        }
    }
    if high.is_some() {
        return Err(HexError::OddLength);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_whitespace() {
        assert_eq!(encode(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(decode("00 AB\n7f").unwrap(), vec![0x00, 0xab, 0x7f]);
        assert_eq!(decode("0").unwrap_err(), HexError::OddLength);
        assert_eq!(
            decode("0g").unwrap_err(),
            HexError::InvalidDigit {
                found: 'g',
                position: 1
            }
        );
    }
}
