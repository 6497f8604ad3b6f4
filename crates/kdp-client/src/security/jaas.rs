//! `sasl.jaas.config`: one JAAS login module entry, as Kafka reads it:
//! `CLASS FLAG key="value" key2=value2;`.
//!
//! Quoted values may hold `\"` and `\\`. Values may be secrets, so errors
//! name positions and keys, never values.

use std::collections::BTreeMap;

use super::secret::Secret;
use crate::security::config_error::ConfigError;

/// A parsed login module entry. Every option value is kept as a [`Secret`]:
/// which ones are secret depends on the module, and none is ever printed.
#[derive(Debug)]
pub struct JaasEntry {
    /// The login module's fully qualified class name, e.g.
    /// `org.apache.kafka.common.security.scram.ScramLoginModule`.
    pub login_module: String,
    /// The module options (`username`, `password`, `clientId`, ...), by key.
    pub options: BTreeMap<String, Secret>,
}

impl JaasEntry {
    /// The option's value, for options that are not secret (user names, ids).
    pub fn plain(&self, key: &str) -> Option<String> {
        self.options.get(key).map(|v| v.expose().to_string())
    }

    /// The option's value, still redacted, for options that hold credentials (`password`,
    /// `clientSecret`).
    pub fn secret(&self, key: &str) -> Option<Secret> {
        self.options.get(key).cloned()
    }

    /// The last part of the class name, e.g. `ScramLoginModule`.
    pub fn module_name(&self) -> &str {
        self.login_module
            .rsplit('.')
            .next()
            .unwrap_or(&self.login_module)
    }
}

fn err(message: String) -> ConfigError {
    ConfigError::new("sasl.jaas.config", message)
}

/// Parses exactly one entry (Kafka's client accepts only one).
pub fn parse(text: &str) -> Result<JaasEntry, ConfigError> {
    let mut tokens = Tokens {
        chars: text.char_indices().peekable(),
    };
    let login_module = match tokens.next()? {
        Some(Token::Word(w)) => w,
        _ => return Err(err("expected a login module class name".into())),
    };
    match tokens.next()? {
        Some(Token::Word(flag))
            if ["required", "requisite", "sufficient", "optional"]
                .iter()
                .any(|f| flag.eq_ignore_ascii_case(f)) => {}
        _ => {
            return Err(err(format!(
                "expected a control flag (required, requisite, sufficient or optional) after {login_module}"
            )))
        }
    }
    let mut options = BTreeMap::new();
    loop {
        match tokens.next()? {
            Some(Token::Semicolon) => break,
            Some(Token::Word(key)) => {
                if tokens.next()? != Some(Token::Equals) {
                    return Err(err(format!("expected '=' after option {key}")));
                }
                let value = match tokens.next()? {
                    Some(Token::Word(v)) | Some(Token::Quoted(v)) => v,
                    _ => return Err(err(format!("expected a value for option {key}"))),
                };
                options.insert(key, Secret::new(value));
            }
            None => {
                return Err(err(
                    "missing ';' at the end of the login module entry".into()
                ))
            }
            Some(_) => return Err(err("expected an option name or ';'".into())),
        }
    }
    if tokens.next()?.is_some() {
        return Err(err(
            "more than one login module entry (kdp, like Kafka clients, takes one)".into(),
        ));
    }
    Ok(JaasEntry {
        login_module,
        options,
    })
}

#[derive(PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

struct Tokens<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl Tokens<'_> {
    fn next(&mut self) -> Result<Option<Token>, ConfigError> {
        while self.chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some((at, c)) = self.chars.next() else {
            return Ok(None);
        };
        Ok(Some(match c {
            '=' => Token::Equals,
            ';' => Token::Semicolon,
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match self.chars.next() {
                        Some((_, '\\')) => match self.chars.next() {
                            Some((_, e)) => s.push(e),
                            None => break,
                        },
                        Some((_, q)) if q == c => return Ok(Some(Token::Quoted(s))),
                        Some((_, o)) => s.push(o),
                        None => break,
                    }
                }
                return Err(err(format!(
                    "unterminated quoted value starting at character {at}"
                )));
            }
            c => {
                let mut s = String::from(c);
                while let Some((_, c)) = self
                    .chars
                    .next_if(|(_, c)| !c.is_whitespace() && !matches!(c, '=' | ';' | '"' | '\''))
                {
                    s.push(c);
                }
                Token::Word(s)
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_login_modules() {
        let e = parse(
            "org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"alice\" password=\"a \\\"quoted\\\" pw;=\";",
        )
        .unwrap();
        assert_eq!(e.module_name(), "ScramLoginModule");
        assert_eq!(e.plain("username").as_deref(), Some("alice"));
        assert_eq!(e.secret("password").unwrap().expose(), "a \"quoted\" pw;=");
        let e = parse("x.PlainLoginModule REQUIRED username=bob password='p';").unwrap();
        assert_eq!(e.plain("username").as_deref(), Some("bob"));
        assert_eq!(e.plain("password").as_deref(), Some("p"));
    }

    #[test]
    fn errors_never_show_values() {
        for bad in [
            "x.PlainLoginModule required password=\"hunter2\"",
            "x.PlainLoginModule password=\"hunter2\";",
            "x.PlainLoginModule required password \"hunter2\";",
            "x.PlainLoginModule required password=\"hunter2;",
            "x.PlainLoginModule required password=\"hunter2\"; y.Z required;",
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("sasl.jaas.config: "), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
        let dbg = format!("{:?}", parse("a.B required password=hunter2;").unwrap());
        assert!(!dbg.contains("hunter2"), "{dbg}");
    }
}
