//! OAUTHBEARER tokens: from a file, or from an OAuth 2 token endpoint with
//! the client-credentials grant (RFC 6749 section 4.4), as Kafka's
//! `sasl.oauthbearer.token.endpoint.url` does.
//!
//! The endpoint is asked with one HTTP/1.0 POST (the answer then ends at
//! EOF, never chunked); `https://` is verified against the system roots.

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::config::{TlsConfig, TokenSource, Trust};
use super::secret::{Secret, SecretBytes};
use super::tls::TlsConnector;
use crate::transport::{connect_tcp, BoxStream, BrokerAddress, Connector};

/// A token endpoint's answer bigger than this is refused.
const MAX_RESPONSE: u64 = 1 << 20;

/// A bearer token and how long it is good for, if the issuer said.
#[derive(Debug, Clone)]
pub struct Token {
    /// The access token, sent in the OAUTHBEARER initial client response as `auth=Bearer ...`.
    pub value: Secret,
    /// The token's lifetime from the issuer's `expires_in`, used to decide when to fetch a new one.
    pub expires_in: Option<Duration>,
}

/// Gets a token; the error holds no secret.
pub async fn fetch(source: &TokenSource) -> Result<Token, String> {
    match source {
        TokenSource::File(path) => {
            let owned = path.clone();
            let text = tokio::task::spawn_blocking(move || std::fs::read_to_string(owned))
                .await
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?
                .map_err(|e| format!("cannot read the token file {}: {e}", path.display()))?;
            let value = text.trim();
            if value.is_empty() {
                return Err(format!("the token file {} is empty", path.display()));
            }
            Ok(Token {
                value: Secret::new(value),
                expires_in: None,
            })
        }
        TokenSource::ClientCredentials {
            endpoint,
            client_id,
            client_secret,
            scope,
        } => client_credentials(endpoint, client_id, client_secret, scope.as_deref()).await,
    }
}

/// RFC 3986 unreserved characters stay, everything else is %-encoded.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

struct Url<'a> {
    tls: bool,
    host: &'a str,
    port: u16,
    path: &'a str,
}

fn parse_url(url: &str) -> Result<Url<'_>, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err("the token endpoint URL is not http(s)://".into());
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err("the token endpoint URL holds credentials (user@host): give them as clientId and clientSecret".into());
    }
    let default_port = if tls { 443 } else { 80 };
    let bad_port = || "the token endpoint URL has a bad port".to_string();
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or("the token endpoint URL lacks ']'")?;
        match after.strip_prefix(':') {
            Some(p) => (h, p.parse().map_err(|_| bad_port())?),
            None => (h, default_port),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().map_err(|_| bad_port())?),
            None => (authority, default_port),
        }
    };
    if host.is_empty() {
        return Err("the token endpoint URL has no host".into());
    }
    Ok(Url {
        tls,
        host,
        port,
        path,
    })
}

async fn client_credentials(
    endpoint: &str,
    client_id: &str,
    client_secret: &Secret,
    scope: Option<&str>,
) -> Result<Token, String> {
    let url = parse_url(endpoint)?;
    let addr = BrokerAddress::new(url.host, url.port);
    let mut stream: BoxStream = if url.tls {
        let connector = TlsConnector::new(&TlsConfig {
            trust: Trust::System,
            identity: None,
            verify_hostname: true,
        })
        .map_err(|e| e.to_string())?;
        connector
            .connect(&addr)
            .await
            .map_err(|e| format!("token endpoint: {e}"))?
    } else {
        // Kafka allows it too; the client secret then crosses the network in the clear
        tracing::warn!(
            host = url.host,
            port = url.port,
            "the OAuth token endpoint is plain http://"
        );
        Box::new(
            connect_tcp(&addr)
                .await
                .map_err(|e| format!("token endpoint: {e}"))?,
        )
    };
    let mut body = String::from("grant_type=client_credentials");
    if let Some(scope) = scope {
        body.push_str("&scope=");
        body.push_str(&form_encode(scope));
    }
    let basic = Secret::new(B64.encode(format!(
        "{}:{}",
        form_encode(client_id),
        form_encode(client_secret.expose())
    )));
    let host_header = if url.host.contains(':') {
        format!("[{}]:{}", url.host, url.port)
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let request = Secret::new(format!(
        "POST {} HTTP/1.0\r\nHost: {host_header}\r\nAuthorization: Basic {}\r\n\
         Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        url.path,
        basic.expose(),
        body.len()
    ));
    stream
        .write_all(request.expose().as_bytes())
        .await
        .map_err(|e| format!("token endpoint: cannot send: {e}"))?;
    stream
        .flush()
        .await
        .map_err(|e| format!("token endpoint: cannot send: {e}"))?;
    let mut raw = Vec::new();
    (&mut stream)
        .take(MAX_RESPONSE + 1)
        .read_to_end(&mut raw)
        .await
        .map_err(|e| format!("token endpoint: cannot read the answer: {e}"))?;
    if raw.len() as u64 > MAX_RESPONSE {
        return Err("token endpoint: the answer is larger than 1 MiB".into());
    }
    parse_token_response(&raw)
}

fn parse_token_response(raw: &[u8]) -> Result<Token, String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("token endpoint: the answer is not HTTP")?;
    let (head, body) = raw
        .split_at_checked(split)
        .ok_or("token endpoint: the answer is not HTTP")?;
    let head = String::from_utf8_lossy(head);
    let body = body.get(4..).unwrap_or_default();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("token endpoint: the answer has no HTTP status")?;
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
    if status != 200 {
        // RFC 6749 5.2 error fields describe the failure and hold no secret
        let error = json.get("error").and_then(|v| v.as_str()).unwrap_or("");
        let desc = json
            .get("error_description")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        return Err(
            format!("token endpoint answered HTTP {status} {error} {desc}")
                .trim_end()
                .to_string(),
        );
    }
    let value = json
        .get("access_token")
        .and_then(|v| v.as_str())
        .filter(|v| !v.is_empty())
        .ok_or("token endpoint: the answer has no access_token")?;
    let expires_in = json
        .get("expires_in")
        .and_then(|v| v.as_u64())
        .map(Duration::from_secs);
    Ok(Token {
        value: Secret::new(value),
        expires_in,
    })
}

/// The RFC 7628 client first message: no authzid, the token as a bearer.
pub fn initial_response(token: &Token) -> SecretBytes {
    SecretBytes::new(format!("n,,\x01auth=Bearer {}\x01\x01", token.value.expose()).into_bytes())
}

/// Shared by the connections of one client: a token is fetched once and
/// reused until 80% of its life has passed.
#[derive(Debug, Default)]
pub struct TokenCache {
    cached: tokio::sync::Mutex<Option<(Token, tokio::time::Instant)>>,
}

impl TokenCache {
    /// The cached token while it is fresh, otherwise a newly fetched one; the error holds no
    /// secret.
    pub async fn get(&self, source: &TokenSource) -> Result<Token, String> {
        let mut guard = self.cached.lock().await;
        if let Some((t, fresh_until)) = guard.as_ref() {
            if tokio::time::Instant::now() < *fresh_until {
                return Ok(t.clone());
            }
        }
        let token = fetch(source).await?;
        let life = token.expires_in.map_or(Duration::ZERO, |d| d.mul_f64(0.8));
        *guard = Some((token.clone(), tokio::time::Instant::now() + life));
        Ok(token)
    }
}

/// Convenience for callers holding the cache behind an `Arc`.
pub type SharedTokenCache = Arc<TokenCache>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_responses() {
        let t = parse_token_response(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"access_token\":\"tok\",\"expires_in\":60}",
        )
        .unwrap();
        assert_eq!(t.value.expose(), "tok");
        assert_eq!(t.expires_in, Some(Duration::from_secs(60)));
        assert!(!format!("{t:?}").contains("tok\""));
        let e = parse_token_response(
            b"HTTP/1.1 401 Unauthorized\r\n\r\n{\"error\":\"invalid_client\"}",
        )
        .unwrap_err();
        assert_eq!(e, "token endpoint answered HTTP 401 invalid_client");
        assert!(parse_token_response(b"HTTP/1.1 200 OK\r\n\r\n{}").is_err());
        assert!(parse_token_response(b"garbage").is_err());
        assert_eq!(
            &*String::from_utf8_lossy(initial_response(&t).expose()),
            "n,,\x01auth=Bearer tok\x01\x01"
        );
    }

    #[test]
    fn urls_and_form_encoding() {
        let u = parse_url("https://idp:8443/realms/k/token").unwrap();
        assert!(u.tls);
        assert_eq!((u.host, u.port, u.path), ("idp", 8443, "/realms/k/token"));
        let u = parse_url("http://[::1]/t").unwrap();
        assert_eq!((u.host, u.port, u.path), ("::1", 80, "/t"));
        assert!(parse_url("ftp://x").is_err());
        let e = parse_url("https://id:hunter2@idp/t").err().unwrap();
        assert!(!e.contains("hunter2"), "{e}");
        assert_eq!(form_encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }
}
