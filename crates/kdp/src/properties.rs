//! Kafka client properties (`--command-config FILE`), in Java's `.properties`
//! syntax, read as `java.util.Properties.load` reads them.
//!
//! Only what kdp uses is kept: `client.id`, `request.timeout.ms`,
//! `socket.connection.setup.timeout.ms`. `security.protocol` must be PLAINTEXT
//! for now. Everything else is reported back as ignored, by key only: values
//! (e.g. `sasl.jaas.config`) may hold secrets and never reach the output.

use std::path::Path;
use std::time::Duration;

use crate::duration;

/// What kdp takes from a client properties file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClientProps {
    pub client_id: Option<String>,
    pub request_timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    /// `ssl.*` and `sasl.*` keys, meaningless over PLAINTEXT.
    pub ignored_security: Vec<String>,
    /// Keys kdp does not use.
    pub unknown: Vec<String>,
}

impl ClientProps {
    /// One line per kind of ignored property, for stderr.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.ignored_security.is_empty() {
            out.push(format!(
                "kdp: warning: security.protocol is PLAINTEXT: ignoring {}",
                self.ignored_security.join(", ")
            ));
        }
        if !self.unknown.is_empty() {
            out.push(format!(
                "kdp: warning: --command-config: ignoring properties kdp does not use: {}",
                self.unknown.join(", ")
            ));
        }
        out
    }
}

/// Reads and interprets a properties file.
pub fn load(path: &Path) -> Result<ClientProps, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    from_str(&text)
}

/// Interprets properties text; the last of repeated keys wins, as in Java.
pub fn from_str(text: &str) -> Result<ClientProps, String> {
    let pairs = parse(text)?;
    let mut props = ClientProps::default();
    let protocol = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "security.protocol")
        .map(|(_, v)| v.trim().to_string());
    if let Some(p) = &protocol {
        if !p.eq_ignore_ascii_case("PLAINTEXT") {
            return Err(format!(
                "security.protocol={p} is not supported yet: kdp speaks PLAINTEXT only \
                 (SSL, SASL_PLAINTEXT and SASL_SSL are planned)"
            ));
        }
    }
    for (k, v) in &pairs {
        match k.as_str() {
            "security.protocol" | "bootstrap.servers" => {}
            "client.id" => props.client_id = Some(v.clone()),
            "request.timeout.ms" => {
                props.request_timeout = Some(duration::from_millis_property(k, v)?);
            }
            "socket.connection.setup.timeout.ms" => {
                props.connect_timeout = Some(duration::from_millis_property(k, v)?);
            }
            k if k.starts_with("ssl.") || k.starts_with("sasl.") => {
                push_once(&mut props.ignored_security, k);
            }
            k => push_once(&mut props.unknown, k),
        }
    }
    Ok(props)
}

fn push_once(list: &mut Vec<String>, key: &str) {
    if !list.iter().any(|k| k == key) {
        list.push(key.to_string());
    }
}

/// Java's whitespace in properties files: space, tab, form feed.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// The key/value pairs of `text`, in order, with Java `Properties.load`'s rules:
/// lines end at `\n`, `\r\n` or `\r`; a line whose first non-blank character is
/// `#` or `!` is a comment; an odd number of trailing backslashes joins the next
/// line (its leading blanks dropped); the key ends at the first unescaped `=`,
/// `:` or blank (blanks, then one `=` or `:`, then blanks are skipped); `\t`,
/// `\n`, `\r`, `\f` and `\uXXXX` are escapes and any other `\c` is `c`.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut logical = String::new();
    let mut continuing = false;
    let mut lines = natural_lines(text).enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let line = line.trim_start_matches(is_blank);
        if !continuing && (line.is_empty() || line.starts_with(['#', '!'])) {
            continue;
        }
        logical.push_str(line);
        let trailing = line.chars().rev().take_while(|c| *c == '\\').count();
        continuing = trailing % 2 == 1;
        if continuing {
            logical.pop();
            if lines.peek().is_some() {
                continue;
            }
        }
        continuing = false;
        let entry = std::mem::take(&mut logical);
        out.push(split_entry(&entry).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    Ok(out)
}

/// Lines ended by `\n`, `\r\n` or a lone `\r`.
fn natural_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        match s.find(['\n', '\r']) {
            Some(i) => {
                let skip = if s[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&s[i + skip..]);
                Some(&s[..i])
            }
            None => {
                rest = None;
                (!s.is_empty()).then_some(s)
            }
        }
    })
}

fn split_entry(entry: &str) -> Result<(String, String), String> {
    let mut key = String::new();
    let mut chars = entry.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(u) = unescape(&mut chars)? {
                    key.push(u);
                }
            }
            '=' | ':' => break,
            c if is_blank(c) => {
                while chars.next_if(|c| is_blank(*c)).is_some() {}
                chars.next_if(|c| matches!(c, '=' | ':'));
                break;
            }
            c => key.push(c),
        }
    }
    while chars.next_if(|c| is_blank(*c)).is_some() {}
    let mut value = String::new();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(u) = unescape(&mut chars)? {
                value.push(u);
            }
        } else {
            value.push(c);
        }
    }
    Ok((key, value))
}

/// The character after a backslash (`None` for a backslash at the very end).
fn unescape(chars: &mut impl Iterator<Item = char>) -> Result<Option<char>, String> {
    let Some(c) = chars.next() else {
        return Ok(None);
    };
    Ok(Some(match c {
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        'f' => '\x0c',
        'u' => {
            let hex: String = chars.take(4).collect();
            let code = (hex.len() == 4)
                .then(|| u32::from_str_radix(&hex, 16).ok())
                .flatten()
                .ok_or_else(|| format!("malformed \\uxxxx escape \\u{hex}"))?;
            // A lone surrogate cannot be a Rust char; Java would keep it, kdp
            // uses U+FFFD (no property kdp reads can contain one meaningfully).
            char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
        }
        c => c,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_java_properties() {
        let p = parse("# c\n! c\n a = 1\nb:2\nc 3\nd=x\\\n   y\ne\\=f=g\n\nempty=\n").unwrap();
        let want = pairs(&[
            ("a", "1"),
            ("b", "2"),
            ("c", "3"),
            ("d", "xy"),
            ("e=f", "g"),
            ("empty", ""),
        ]);
        assert_eq!(p, want);
    }

    #[test]
    fn separators_escapes_and_line_ends() {
        let text = "k1 : v1\r\nk2\t=\tv 2 \rk\\ 3=a\\tb\\u0041\\\\\n  # a comment\\\n\
                    k4=\\\n  # continued, not a comment\nkey5\n\\#k6=x\n";
        let want = pairs(&[
            ("k1", "v1"),
            ("k2", "v 2 "),
            ("k 3", "a\tbA\\"),
            ("k4", "# continued, not a comment"),
            ("key5", ""),
            ("#k6", "x"),
        ]);
        assert_eq!(parse(text).unwrap(), want);
        // A comment never continues, even when it ends in a backslash.
        assert_eq!(parse("# c \\\nk=v").unwrap(), pairs(&[("k", "v")]));
        // A backslash at the end of the input is dropped.
        assert_eq!(parse("k=v\\").unwrap(), pairs(&[("k", "v")]));
        // An even number of trailing backslashes is an escaped backslash.
        assert_eq!(
            parse("k=v\\\\\nn=m").unwrap(),
            pairs(&[("k", "v\\"), ("n", "m")])
        );
        assert_eq!(
            parse("a=1\nk=\\u00zz").unwrap_err(),
            "line 2: malformed \\uxxxx escape \\u00zz"
        );
        assert!(parse("k=\\u12").is_err());
    }

    #[test]
    fn plaintext_only() {
        assert!(from_str("security.protocol=PLAINTEXT\nclient.id=ops\n").is_ok());
        let e = from_str("security.protocol=SASL_SSL\n").unwrap_err();
        assert!(e.contains("SASL_SSL is not supported"), "{e}");
        let p = from_str("client.id=ops\nrequest.timeout.ms=1500\n").unwrap();
        assert_eq!(p.client_id.as_deref(), Some("ops"));
        assert_eq!(p.request_timeout, Some(Duration::from_millis(1500)));
        assert!(from_str("request.timeout.ms=soon\n").is_err());
    }

    #[test]
    fn ignored_properties_are_warned_about_by_key_only() {
        let p = from_str(
            "sasl.jaas.config=secret-password\nretries=3\nretries=4\nbootstrap.servers=x:1\n",
        )
        .unwrap();
        assert_eq!(p.ignored_security, ["sasl.jaas.config"]);
        assert_eq!(p.unknown, ["retries"]);
        let w = p.warnings().join("\n");
        assert_eq!(
            w,
            "kdp: warning: security.protocol is PLAINTEXT: ignoring sasl.jaas.config\n\
             kdp: warning: --command-config: ignoring properties kdp does not use: retries"
        );
        assert!(!w.contains("secret"));
        assert!(from_str("client.id=a\n").unwrap().warnings().is_empty());
    }
}
