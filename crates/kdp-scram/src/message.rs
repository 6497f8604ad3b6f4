//! The text of SCRAM messages: `k=v` attributes separated by commas, and
//! the saslname escaping of user names (RFC 5802 section 5.1).

/// Iterates the attributes of a message: `(name, value)` for each `k=v`,
/// `None` for a part without `=` or with a name that is not one letter.
pub fn attributes(message: &str) -> impl Iterator<Item = Option<(char, &str)>> {
    message.split(',').map(|part| {
        let (k, v) = part.split_once('=')?;
        let mut chars = k.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some((c, v)),
            _ => None,
        }
    })
}

/// A user name as a saslname: `=` as `=3D` and `,` as `=2C`.
pub fn escape_saslname(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// A saslname back to the user name; `None` if an `=` starts anything but
/// `=3D` or `=2C` (RFC 5802: the server must then fail the exchange).
pub fn unescape_saslname(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('=') {
        out.push_str(rest.get(..at)?);
        let after = rest.get(at..)?;
        if let Some(r) = after.strip_prefix("=3D") {
            out.push('=');
            rest = r;
        } else if let Some(r) = after.strip_prefix("=2C") {
            out.push(',');
            rest = r;
        } else {
            return None;
        }
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saslnames_round_trip() {
        for user in ["alice", "a,b=c", "==,,", "", "ünï"] {
            assert_eq!(
                unescape_saslname(&escape_saslname(user)).as_deref(),
                Some(user)
            );
        }
        assert_eq!(escape_saslname("a,b=c"), "a=2Cb=3Dc");
        for bad in ["a=", "a=3", "=41", "x=2c"] {
            assert_eq!(unescape_saslname(bad), None, "{bad}");
        }
    }

    #[test]
    fn attributes_name_one_letter() {
        let got: Vec<_> = attributes("r=ab=c,s=,xy=1,noequals,i=4096").collect();
        assert_eq!(
            got,
            vec![
                Some(('r', "ab=c")),
                Some(('s', "")),
                None,
                None,
                Some(('i', "4096"))
            ]
        );
    }
}
