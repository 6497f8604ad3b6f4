//! Kafka client properties (`--command-config FILE`, `--command-property
//! KEY=VALUE`), in Java's `.properties` syntax, read as
//! `java.util.Properties.load` reads them.
//!
//! kdp keeps `client.id`, `request.timeout.ms`,
//! `socket.connection.setup.timeout.ms`, and the security properties that
//! `kdp_client::security::SecurityConfig` reads. Everything else is reported
//! back as ignored, by key only: values (e.g. `sasl.jaas.config`) may hold
//! secrets and never reach the output.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kdp_client::security::{is_security_property, SecurityConfig};

use crate::duration;

/// What kdp takes from a client properties file.
#[derive(Debug, Default, Clone)]
pub struct ClientProps {
    pub client_id: Option<String>,
    pub request_timeout: Option<Duration>,
    pub connect_timeout: Option<Duration>,
    pub security: SecurityConfig,
    /// Security keys meaningless under the chosen `security.protocol`.
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
                "kdp: warning: security.protocol does not use: {}",
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

/// `--command-config` and `--command-property`, for every command that talks
/// to a cluster (`#[command(flatten)]` it). `Debug` shows property keys only.
#[derive(clap::Args, Clone, Default)]
pub struct ClientArgs {
    /// Kafka client properties file, the one kafka-transactions.sh --command-config
    /// reads: security.protocol, sasl.*, ssl.* (PEM), client.id, request.timeout.ms.
    #[arg(long, value_name = "FILE", global = true)]
    pub command_config: Option<PathBuf>,
    /// Sets one client property, overriding --command-config; repeatable
    /// (e.g. --command-property security.protocol=SASL_SSL).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_key_value, global = true)]
    pub command_property: Vec<(String, String)>,
}

impl std::fmt::Debug for ClientArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self
            .command_property
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        f.debug_struct("ClientArgs")
            .field("command_config", &self.command_config)
            .field("command_property_keys", &keys)
            .finish()
    }
}

/// `KEY=VALUE`, as `--command-property` takes it.
pub fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err("expected KEY=VALUE".into()),
    }
}

impl ClientArgs {
    /// The file's properties with the command-line ones after them (so they
    /// win), interpreted. The error names the flag; never a value.
    pub fn load(&self) -> Result<ClientProps, String> {
        let mut pairs = match &self.command_config {
            Some(path) => {
                read(path).map_err(|e| format!("--command-config {}: {e}", path.display()))?
            }
            None => Vec::new(),
        };
        pairs.extend(self.command_property.iter().cloned());
        from_pairs(&pairs).map_err(|e| match &self.command_config {
            Some(path) => format!("--command-config {}: {e}", path.display()),
            None => format!("--command-property: {e}"),
        })
    }
}

/// The key/value pairs of a properties file.
pub fn read(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    parse(&text)
}

/// Interprets properties text; the last of repeated keys wins, as in Java.
#[cfg(test)]
pub fn from_str(text: &str) -> Result<ClientProps, String> {
    from_pairs(&parse(text)?)
}

/// Interprets key/value pairs; the last of repeated keys wins, as in Java.
pub fn from_pairs(pairs: &[(String, String)]) -> Result<ClientProps, String> {
    let security = SecurityConfig::from_properties(pairs).map_err(|e| e.to_string())?;
    let mut props = ClientProps {
        ignored_security: security
            .unused_properties(pairs)
            .into_iter()
            .map(str::to_string)
            .collect(),
        security,
        ..ClientProps::default()
    };
    for (k, v) in pairs {
        match k.as_str() {
            "bootstrap.servers" => {}
            "client.id" => props.client_id = Some(v.clone()),
            "request.timeout.ms" => {
                props.request_timeout = Some(duration::from_millis_property(k, v)?);
            }
            "socket.connection.setup.timeout.ms" => {
                props.connect_timeout = Some(duration::from_millis_property(k, v)?);
            }
            k if is_security_property(k) => {}
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
                // the characters are not echoed: the value may be a password
                .ok_or_else(|| "malformed \\uxxxx escape".to_string())?;
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
            "line 2: malformed \\uxxxx escape"
        );
        assert!(parse("k=\\u12").is_err());
    }

    #[test]
    fn client_properties() {
        assert!(from_str("security.protocol=PLAINTEXT\nclient.id=ops\n").is_ok());
        let e = from_str("security.protocol=SASL_SSL\n").unwrap_err();
        assert!(e.contains("GSSAPI"), "{e}");
        let p = from_str("client.id=ops\nrequest.timeout.ms=1500\n").unwrap();
        assert_eq!(p.client_id.as_deref(), Some("ops"));
        assert_eq!(p.request_timeout, Some(Duration::from_millis(1500)));
        assert!(from_str("request.timeout.ms=soon\n").is_err());
        let p = from_str(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n\
             sasl.jaas.config=x.PlainLoginModule required username=u password=\"hunter2\";\n",
        )
        .unwrap();
        assert!(p.security.sasl.is_some());
        assert!(p.warnings().is_empty());
        assert!(!format!("{p:?}").contains("hunter2"));
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
            "kdp: warning: security.protocol does not use: sasl.jaas.config\n\
             kdp: warning: --command-config: ignoring properties kdp does not use: retries"
        );
        assert!(!w.contains("secret"));
        assert!(from_str("client.id=a\n").unwrap().warnings().is_empty());
    }

    #[test]
    fn command_properties_override_the_file() {
        let dir = std::env::temp_dir().join(format!("kdp-props-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("client.properties");
        std::fs::write(&file, "client.id=from-file\nrequest.timeout.ms=100\n").unwrap();
        let args = ClientArgs {
            command_config: Some(file),
            command_property: vec![parse_key_value("client.id=cli").unwrap()],
        };
        let p = args.load().unwrap();
        assert_eq!(p.client_id.as_deref(), Some("cli"));
        assert_eq!(p.request_timeout, Some(Duration::from_millis(100)));
        let secret = ClientArgs {
            command_config: None,
            command_property: vec![parse_key_value("sasl.password=hunter2").unwrap()],
        };
        assert!(!format!("{secret:?}").contains("hunter2"));
        assert!(parse("k=\\u12zzhunter2")
            .unwrap_err()
            .find("hunter2")
            .is_none());
        assert!(parse_key_value("novalue").is_err());
        assert!(parse_key_value("=v").is_err());
        let e = ClientArgs {
            command_config: None,
            command_property: vec![parse_key_value("security.protocol=SSH").unwrap()],
        }
        .load()
        .unwrap_err();
        assert!(
            e.starts_with("--command-property: security.protocol:"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
