//! [`SecurityConfig`] from Kafka client properties.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::jaas;
use super::secret::Secret;
use crate::security::config_error::ConfigError;

/// `security.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// `PLAINTEXT`: neither TLS nor SASL; the connection is unencrypted and unauthenticated.
    Plaintext,
    /// `SSL`: TLS, optionally with a client certificate (mutual TLS), and no SASL.
    Ssl,
    /// `SASL_PLAINTEXT`: SASL authentication over an unencrypted connection.
    SaslPlaintext,
    /// `SASL_SSL`: SASL authentication inside a TLS session.
    SaslSsl,
}

impl SecurityProtocol {
    fn parse(s: &str) -> Result<Self, ConfigError> {
        Ok(match s.trim().to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Self::Plaintext,
            "SSL" => Self::Ssl,
            "SASL_PLAINTEXT" => Self::SaslPlaintext,
            "SASL_SSL" => Self::SaslSsl,
            other => {
                return Err(ConfigError::new(
                    "security.protocol",
                    format!(
                    "unknown protocol {other:?}: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
                ),
                ))
            }
        })
    }

    /// Whether connections start with a TLS handshake (`SSL` and `SASL_SSL`).
    pub fn uses_tls(self) -> bool {
        matches!(self, Self::Ssl | Self::SaslSsl)
    }

    /// Whether connections authenticate with SASL after connecting (`SASL_*`).
    pub fn uses_sasl(self) -> bool {
        matches!(self, Self::SaslPlaintext | Self::SaslSsl)
    }
}

/// How to connect: TLS (for SSL and SASL_SSL) and SASL (for SASL_*).
#[derive(Debug, Clone)]
pub struct SecurityConfig {
    /// `security.protocol`: which of TLS and SASL connections use.
    pub protocol: SecurityProtocol,
    /// The `ssl.*` settings; set when `security.protocol` is `SSL` or `SASL_SSL`.
    pub tls: Option<TlsConfig>,
    /// The `sasl.*` settings; set when `security.protocol` is `SASL_PLAINTEXT` or `SASL_SSL`.
    pub sasl: Option<SaslConfig>,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            protocol: SecurityProtocol::Plaintext,
            tls: None,
            sasl: None,
        }
    }
}

/// Which certificates sign brokers' certificates.
#[derive(Debug, Clone)]
pub enum Trust {
    /// The operating system's roots.
    System,
    /// PEM certificates; `origin` says where they came from, for errors.
    Pem {
        /// The property or file the certificates were read from
        /// (`ssl.truststore.certificates` or the `ssl.truststore.location` path).
        origin: String,
        /// The CA certificates, as PEM `CERTIFICATE` blocks.
        pem: String,
    },
}

/// A client certificate chain and its private key (mutual TLS).
#[derive(Debug, Clone)]
pub struct Identity {
    /// Where the certificate and key came from (a keystore path or property name), for errors.
    pub origin: String,
    /// The client certificate chain, leaf first, presented to brokers that require
    /// `ssl.client.auth`.
    pub cert_chain_pem: String,
    /// The private key of the leaf certificate, as PEM (possibly encrypted PKCS#8).
    pub key_pem: Secret,
    /// `ssl.key.password`, for an encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`).
    pub key_password: Option<Secret>,
}

/// The `ssl.*` settings: how to verify brokers and, for mutual TLS, who the client is.
#[derive(Debug, Clone)]
pub struct TlsConfig {
    /// The CAs that brokers' certificates must chain to (`ssl.truststore.*`).
    pub trust: Trust,
    /// The client certificate for mutual TLS (`ssl.keystore.*`), if configured.
    pub identity: Option<Identity>,
    /// `ssl.endpoint.identification.algorithm=https` (the default); empty disables it.
    pub verify_hostname: bool,
}

/// The SCRAM variant of `sasl.mechanism` (RFC 5802 / RFC 7677), by hash
/// function; shared with the mock broker's SCRAM server.
pub use kdp_scram::Mechanism as ScramMechanism;

/// The `sasl.mechanism` and the credentials it needs (from `sasl.jaas.config` or
/// `sasl.username`/`sasl.password`).
#[derive(Debug, Clone)]
pub enum SaslConfig {
    /// `PLAIN` (RFC 4616): the user name and password are sent as they are, so use it with
    /// `SASL_SSL`.
    Plain {
        /// The user to authenticate as (the JAAS `username` option).
        username: String,
        /// The user's password (the JAAS `password` option).
        password: Secret,
    },
    /// `SCRAM-SHA-256` or `SCRAM-SHA-512`: a salted challenge-response that never sends the
    /// password.
    Scram {
        /// Which SCRAM hash `sasl.mechanism` names.
        mechanism: ScramMechanism,
        /// The SCRAM user to authenticate as (the JAAS `username` option).
        username: String,
        /// The SCRAM user's password (the JAAS `password` option); only proofs derived from it are
        /// sent.
        password: Secret,
    },
    /// `OAUTHBEARER` (RFC 7628): a bearer token from an OAuth 2 issuer.
    OAuthBearer(OAuthConfig),
}

impl SaslConfig {
    /// The `sasl.mechanism` name requested in SaslHandshake.
    pub fn mechanism(&self) -> &'static str {
        match self {
            SaslConfig::Plain { .. } => "PLAIN",
            SaslConfig::Scram { mechanism, .. } => mechanism.name(),
            SaslConfig::OAuthBearer(_) => "OAUTHBEARER",
        }
    }
}

/// The `sasl.oauthbearer.*` settings for `sasl.mechanism=OAUTHBEARER`.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// Where each authentication gets its bearer token.
    pub token: TokenSource,
}

/// Where OAUTHBEARER tokens come from.
#[derive(Debug, Clone)]
pub enum TokenSource {
    /// `sasl.oauthbearer.token.endpoint.url=file:///path`: a token kept in a file
    /// (read at each authentication, so a sidecar may refresh it).
    File(PathBuf),
    /// The OAuth 2 client-credentials grant against an HTTPS token endpoint.
    ClientCredentials {
        /// `sasl.oauthbearer.token.endpoint.url`: the issuer's token endpoint.
        endpoint: String,
        /// `sasl.oauthbearer.client.credentials.client.id` (or the JAAS `clientId` option).
        client_id: String,
        /// `sasl.oauthbearer.client.credentials.client.secret` (or the JAAS `clientSecret` option).
        client_secret: Secret,
        /// `sasl.oauthbearer.scope` (or the JAAS `scope` option), requested with the token if set.
        scope: Option<String>,
    },
}

/// Every property [`SecurityConfig::from_properties`] reads (others are the
/// caller's, or unknown).
const KNOWN: &[&str] = &[
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",
    "sasl.jaas.config",
    "sasl.username",
    "sasl.password",
    "sasl.login.callback.handler.class",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.scope",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
];

/// Whether [`SecurityConfig::from_properties`] reads `key`.
pub fn is_security_property(key: &str) -> bool {
    KNOWN.contains(&key)
}

struct Props<'a>(HashMap<&'a str, &'a str>);

impl Props<'_> {
    fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).copied()
    }

    /// Present and not blank.
    fn value(&self, k: &str) -> Option<&str> {
        self.get(k).map(str::trim).filter(|v| !v.is_empty())
    }
}

impl SecurityConfig {
    /// Reads the security properties of `pairs` (in file order; the last of
    /// repeated keys wins). Files named by properties are read here, so that
    /// a missing file is reported before any connection is made.
    pub fn from_properties(pairs: &[(String, String)]) -> Result<Self, ConfigError> {
        let p = Props(
            pairs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
        );
        let protocol = match p.value("security.protocol") {
            Some(s) => SecurityProtocol::parse(s)?,
            None => SecurityProtocol::Plaintext,
        };
        let tls = if protocol.uses_tls() {
            Some(tls_config(&p)?)
        } else {
            None
        };
        let sasl = if protocol.uses_sasl() {
            Some(sasl_config(&p)?)
        } else {
            None
        };
        Ok(SecurityConfig {
            protocol,
            tls,
            sasl,
        })
    }

    /// Properties that are set but mean nothing under this protocol (e.g.
    /// `ssl.*` over PLAINTEXT), by key.
    pub fn unused_properties<'a>(&self, pairs: &'a [(String, String)]) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for (k, _) in pairs {
            let unused = (k.starts_with("ssl.") && !self.protocol.uses_tls())
                || (k.starts_with("sasl.") && !self.protocol.uses_sasl());
            if unused && is_security_property(k) && !out.contains(&k.as_str()) {
                out.push(k);
            }
        }
        out
    }
}

fn read_file(key: &str, path: &str) -> Result<String, ConfigError> {
    std::fs::read_to_string(Path::new(path))
        .map_err(|e| ConfigError::new(key, format!("cannot read {path}: {e}")))
}

fn is_pem(text: &str) -> bool {
    text.contains("-----BEGIN ")
}

fn tls_config(p: &Props<'_>) -> Result<TlsConfig, ConfigError> {
    let verify_hostname = match p.get("ssl.endpoint.identification.algorithm").map(str::trim) {
        None => true,
        Some("") => false,
        Some(a) if a.eq_ignore_ascii_case("https") => true,
        Some(a) => {
            return Err(ConfigError::new(
                "ssl.endpoint.identification.algorithm",
                format!("unknown algorithm {a:?}: use https, or an empty value to turn hostname verification off"),
            ))
        }
    };
    Ok(TlsConfig {
        trust: trust(p)?,
        identity: identity(p)?,
        verify_hostname,
    })
}

fn store_type(p: &Props<'_>, key: &str) -> Option<String> {
    p.value(key).map(|t| t.to_ascii_uppercase())
}

fn trust(p: &Props<'_>) -> Result<Trust, ConfigError> {
    let ty = store_type(p, "ssl.truststore.type");
    if let Some(pem) = p.value("ssl.truststore.certificates") {
        if ty.as_deref().is_some_and(|t| t != "PEM") {
            return Err(ConfigError::new(
                "ssl.truststore.certificates",
                "needs ssl.truststore.type=PEM",
            ));
        }
        return Ok(Trust::Pem {
            origin: "ssl.truststore.certificates".into(),
            pem: pem.to_string(),
        });
    }
    if let Some(path) = p.value("ssl.truststore.location") {
        let text = std::fs::read(path).map_err(|e| {
            ConfigError::new(
                "ssl.truststore.location",
                format!("cannot read {path}: {e}"),
            )
        })?;
        return match String::from_utf8(text).ok().filter(|t| is_pem(t)) {
            Some(pem) if ty.as_deref().is_none_or(|t| t == "PEM") => Ok(Trust::Pem {
                origin: path.to_string(),
                pem,
            }),
            _ => Err(not_pem_truststore(path, ty.as_deref())),
        };
    }
    if let Some(path) = p.value("ssl.ca.location") {
        let pem = read_file("ssl.ca.location", path)?;
        return Ok(Trust::Pem {
            origin: path.to_string(),
            pem,
        });
    }
    Ok(Trust::System)
}

fn not_pem_truststore(path: &str, ty: Option<&str>) -> ConfigError {
    let convert = if ty == Some("PKCS12") {
        format!("openssl pkcs12 -in {path} -nokeys -out truststore.pem")
    } else {
        format!("keytool -list -rfc -keystore {path} > truststore.pem")
    };
    ConfigError::new(
        "ssl.truststore.location",
        format!(
            "{path} is a {} store; kdp reads PEM only. Convert it with `{convert}`, then set \
             ssl.truststore.type=PEM and ssl.truststore.location=truststore.pem",
            ty.unwrap_or("JKS")
        ),
    )
}

fn not_pem_keystore(path: &str, ty: Option<&str>) -> ConfigError {
    let convert = if ty == Some("PKCS12") {
        format!("openssl pkcs12 -in {path} -out keystore.pem -nodes")
    } else {
        format!(
            "keytool -importkeystore -srckeystore {path} -destkeystore keystore.p12 \
             -deststoretype PKCS12 && openssl pkcs12 -in keystore.p12 -out keystore.pem -nodes"
        )
    };
    ConfigError::new(
        "ssl.keystore.location",
        format!(
            "{path} is a {} store; kdp reads PEM only. Convert it with `{convert}`, then set \
             ssl.keystore.type=PEM and ssl.keystore.location=keystore.pem",
            ty.unwrap_or("JKS")
        ),
    )
}

fn identity(p: &Props<'_>) -> Result<Option<Identity>, ConfigError> {
    let ty = store_type(p, "ssl.keystore.type");
    let (origin, chain, key) = if let Some(key) = p.value("ssl.keystore.key") {
        let chain = p.value("ssl.keystore.certificate.chain").ok_or_else(|| {
            ConfigError::new(
                "ssl.keystore.key",
                "needs ssl.keystore.certificate.chain too",
            )
        })?;
        if ty.as_deref().is_some_and(|t| t != "PEM") {
            return Err(ConfigError::new(
                "ssl.keystore.key",
                "needs ssl.keystore.type=PEM",
            ));
        }
        (
            "ssl.keystore.key".to_string(),
            chain.to_string(),
            Secret::new(key),
        )
    } else if let Some(path) = p.value("ssl.keystore.location") {
        let text = std::fs::read(path).map_err(|e| {
            ConfigError::new("ssl.keystore.location", format!("cannot read {path}: {e}"))
        })?;
        match String::from_utf8(text).ok().filter(|t| is_pem(t)) {
            Some(pem) if ty.as_deref().is_none_or(|t| t == "PEM") => {
                let pem = Secret::new(pem);
                (path.to_string(), pem.expose().to_string(), pem)
            }
            _ => return Err(not_pem_keystore(path, ty.as_deref())),
        }
    } else if let Some(cert) = p.value("ssl.certificate.location") {
        let key = p.value("ssl.key.location").ok_or_else(|| {
            ConfigError::new("ssl.certificate.location", "needs ssl.key.location too")
        })?;
        let chain = read_file("ssl.certificate.location", cert)?;
        let key = Secret::new(read_file("ssl.key.location", key)?);
        (cert.to_string(), chain, key)
    } else if p.value("ssl.key.location").is_some() {
        return Err(ConfigError::new(
            "ssl.key.location",
            "needs ssl.certificate.location too",
        ));
    } else if p.value("ssl.keystore.certificate.chain").is_some() {
        return Err(ConfigError::new(
            "ssl.keystore.certificate.chain",
            "needs ssl.keystore.key too",
        ));
    } else {
        return Ok(None);
    };
    let key_password = p
        .get("ssl.key.password")
        .filter(|v| !v.is_empty())
        .map(Secret::from);
    if key.expose().contains("Proc-Type: 4,ENCRYPTED") {
        return Err(ConfigError::new(
            "ssl.key.password",
            format!(
                "the private key of {origin} is in OpenSSL's legacy encrypted format: convert it \
                 to PKCS#8 with `openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY.pem -out key.pem`"
            ),
        ));
    }
    if key
        .expose()
        .contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
        && key_password.is_none()
    {
        return Err(ConfigError::new(
            "ssl.key.password",
            format!("the private key of {origin} is encrypted: set ssl.key.password"),
        ));
    }
    Ok(Some(Identity {
        origin,
        cert_chain_pem: chain,
        key_pem: key,
        key_password,
    }))
}

fn sasl_config(p: &Props<'_>) -> Result<SaslConfig, ConfigError> {
    let (key, mechanism) = match (p.value("sasl.mechanism"), p.value("sasl.mechanisms")) {
        (Some(m), _) => ("sasl.mechanism", m.to_ascii_uppercase()),
        (None, Some(m)) => ("sasl.mechanisms", m.to_ascii_uppercase()),
        // Kafka's default; named so that the error below says why
        (None, None) => ("sasl.mechanism", "GSSAPI".to_string()),
    };
    let jaas = p.value("sasl.jaas.config").map(jaas::parse).transpose()?;
    let expect_module = |want: &str| -> Result<(), ConfigError> {
        match &jaas {
            Some(j) if j.module_name() != want => Err(ConfigError::new(
                "sasl.jaas.config",
                format!(
                    "{} does not go with sasl.mechanism={mechanism}: use {want}",
                    j.module_name()
                ),
            )),
            _ => Ok(()),
        }
    };
    let credentials = || -> Result<(String, Secret), ConfigError> {
        if let Some(j) = &jaas {
            let user = j.plain("username").ok_or_else(|| {
                ConfigError::new(
                    "sasl.jaas.config",
                    "the login module has no username option",
                )
            })?;
            let pw = j.secret("password").ok_or_else(|| {
                ConfigError::new(
                    "sasl.jaas.config",
                    "the login module has no password option",
                )
            })?;
            return Ok((user, pw));
        }
        match (p.get("sasl.username"), p.get("sasl.password")) {
            (Some(u), Some(pw)) => Ok((u.to_string(), Secret::new(pw))),
            _ => Err(ConfigError::new(
                "sasl.jaas.config",
                format!("sasl.mechanism={mechanism} needs a username and password: set sasl.jaas.config (or sasl.username and sasl.password)"),
            )),
        }
    };
    match mechanism.as_str() {
        "PLAIN" => {
            expect_module("PlainLoginModule")?;
            let (username, password) = credentials()?;
            Ok(SaslConfig::Plain { username, password })
        }
        "SCRAM-SHA-256" | "SCRAM-SHA-512" => {
            expect_module("ScramLoginModule")?;
            let (username, password) = credentials()?;
            let mechanism = if mechanism == "SCRAM-SHA-256" {
                ScramMechanism::Sha256
            } else {
                ScramMechanism::Sha512
            };
            Ok(SaslConfig::Scram {
                mechanism,
                username,
                password,
            })
        }
        "OAUTHBEARER" => {
            expect_module("OAuthBearerLoginModule")?;
            oauth_config(p, jaas.as_ref()).map(SaslConfig::OAuthBearer)
        }
        "GSSAPI" => Err(ConfigError::new(
            key,
            "GSSAPI (Kerberos) is not supported by kdp: ask for a SCRAM-SHA-512 or OAUTHBEARER \
             user, or run kafka-transactions.sh with this file",
        )),
        "AWS_MSK_IAM" => Err(ConfigError::new(
            key,
            "AWS_MSK_IAM is not supported by kdp: use the cluster's SASL/SCRAM listener \
             (port 9096) with SCRAM-SHA-512, or its mutual-TLS listener",
        )),
        other => Err(ConfigError::new(
            key,
            format!("unknown SASL mechanism {other:?}: kdp supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER"),
        )),
    }
}

fn oauth_config(p: &Props<'_>, jaas: Option<&jaas::JaasEntry>) -> Result<OAuthConfig, ConfigError> {
    const URL: &str = "sasl.oauthbearer.token.endpoint.url";
    let url = p.value(URL).ok_or_else(|| {
        ConfigError::new(
            URL,
            "OAUTHBEARER needs a token: an https:// token endpoint (client credentials) or file:///path to a token",
        )
    })?;
    if let Some(path) = url.strip_prefix("file://") {
        return Ok(OAuthConfig {
            token: TokenSource::File(PathBuf::from(path)),
        });
    }
    if !url.starts_with("https://") && !url.starts_with("http://") {
        return Err(ConfigError::new(URL, "expected an https:// or file:// URL"));
    }
    let jaas_opt = |k: &str| jaas.and_then(|j| j.options.get(k).cloned());
    let client_id = p
        .value("sasl.oauthbearer.client.credentials.client.id")
        .map(Secret::from)
        .or_else(|| jaas_opt("clientId"))
        .ok_or_else(|| {
            ConfigError::new(
                "sasl.jaas.config",
                "the client-credentials flow needs clientId",
            )
        })?;
    let client_secret = p
        .get("sasl.oauthbearer.client.credentials.client.secret")
        .map(Secret::from)
        .or_else(|| jaas_opt("clientSecret"))
        .ok_or_else(|| {
            ConfigError::new(
                "sasl.jaas.config",
                "the client-credentials flow needs clientSecret",
            )
        })?;
    let scope = p
        .value("sasl.oauthbearer.scope")
        .map(str::to_string)
        .or_else(|| jaas_opt("scope").map(|s| s.expose().to_string()));
    Ok(OAuthConfig {
        token: TokenSource::ClientCredentials {
            endpoint: url.to_string(),
            client_id: client_id.expose().to_string(),
            client_secret,
            scope,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(text: &[(&str, &str)]) -> Vec<(String, String)> {
        text.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn load(text: &[(&str, &str)]) -> Result<SecurityConfig, ConfigError> {
        SecurityConfig::from_properties(&props(text))
    }

    #[test]
    fn sasl_mechanisms_from_jaas_and_librdkafka_names() {
        let c = load(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"alice\" password=\"pw1\";",
            ),
        ])
        .unwrap();
        assert!(c.tls.is_none());
        match c.sasl.unwrap() {
            SaslConfig::Scram {
                mechanism,
                username,
                password,
            } => {
                assert_eq!(mechanism, ScramMechanism::Sha512);
                assert_eq!(username, "alice");
                assert_eq!(password.expose(), "pw1");
            }
            other => panic!("{other:?}"),
        }
        let c = load(&[
            ("security.protocol", "sasl_ssl"),
            ("sasl.mechanisms", "PLAIN"),
            ("sasl.username", "bob"),
            ("sasl.password", "pw2"),
        ])
        .unwrap();
        assert!(matches!(c.tls.unwrap().trust, Trust::System));
        assert!(matches!(c.sasl.unwrap(), SaslConfig::Plain { username, .. } if username == "bob"));
    }

    #[test]
    fn unsupported_and_mismatched_mechanisms_say_what_to_do() {
        let e = load(&[("security.protocol", "SASL_SSL")]).unwrap_err();
        assert!(
            e.message.contains("GSSAPI (Kerberos) is not supported"),
            "{e}"
        );
        let e = load(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "AWS_MSK_IAM"),
        ])
        .unwrap_err();
        assert!(e.message.contains("SCRAM-SHA-512"), "{e}");
        let e = load(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            (
                "sasl.jaas.config",
                "a.ScramLoginModule required username=u password=hunter2;",
            ),
        ])
        .unwrap_err();
        assert!(e.message.contains("use PlainLoginModule"), "{e}");
        assert!(!e.to_string().contains("hunter2"));
        assert!(load(&[("security.protocol", "TLS")]).is_err());
    }

    #[test]
    fn oauth_token_sources() {
        let c = load(&[
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"kdp\" clientSecret=\"s3\" scope=\"kafka\";",
            ),
        ])
        .unwrap();
        let Some(SaslConfig::OAuthBearer(o)) = c.sasl else {
            panic!()
        };
        match o.token {
            TokenSource::ClientCredentials {
                client_id,
                client_secret,
                scope,
                ..
            } => {
                assert_eq!(client_id, "kdp");
                assert_eq!(client_secret.expose(), "s3");
                assert_eq!(scope.as_deref(), Some("kafka"));
            }
            other => panic!("{other:?}"),
        }
        let c = load(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.token.endpoint.url", "file:///run/token"),
        ])
        .unwrap();
        assert!(
            matches!(c.sasl, Some(SaslConfig::OAuthBearer(OAuthConfig { token: TokenSource::File(p) })) if p == Path::new("/run/token"))
        );
    }

    #[test]
    fn stores_other_than_pem_get_a_conversion_command() {
        let dir = std::env::temp_dir().join(format!("kdp-sec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let jks = dir.join("t.jks");
        std::fs::write(&jks, [0xfe, 0xed, 0xfe, 0xed, 0, 0]).unwrap();
        let jks = jks.to_str().unwrap();
        let e = load(&[
            ("security.protocol", "SSL"),
            ("ssl.truststore.location", jks),
        ])
        .unwrap_err();
        assert!(
            e.message
                .contains(&format!("keytool -list -rfc -keystore {jks}")),
            "{e}"
        );
        let e = load(&[
            ("security.protocol", "SSL"),
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.location", jks),
        ])
        .unwrap_err();
        assert!(e.message.contains("openssl pkcs12 -in"), "{e}");
        let enc = dir.join("k.pem");
        std::fs::write(
            &enc,
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n-----END ENCRYPTED PRIVATE KEY-----\n",
        )
        .unwrap();
        let e = load(&[
            ("security.protocol", "SSL"),
            ("ssl.certificate.location", enc.to_str().unwrap()),
            ("ssl.key.location", enc.to_str().unwrap()),
        ])
        .unwrap_err();
        assert_eq!(e.key, "ssl.key.password");
        assert!(
            e.message.contains("is encrypted: set ssl.key.password"),
            "{e}"
        );
        let c = load(&[
            ("security.protocol", "SSL"),
            ("ssl.certificate.location", enc.to_str().unwrap()),
            ("ssl.key.location", enc.to_str().unwrap()),
            ("ssl.key.password", "hunter2"),
        ])
        .unwrap();
        let id = c.tls.unwrap().identity.unwrap();
        assert_eq!(id.key_password.as_ref().unwrap().expose(), "hunter2");
        assert!(!format!("{id:?}").contains("hunter2"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn hostname_verification_and_unused_keys() {
        let c = load(&[
            ("security.protocol", "SSL"),
            ("ssl.endpoint.identification.algorithm", ""),
            ("ssl.truststore.type", "PEM"),
            (
                "ssl.truststore.certificates",
                "-----BEGIN CERTIFICATE-----\n...",
            ),
        ])
        .unwrap();
        let tls = c.tls.unwrap();
        assert!(!tls.verify_hostname);
        assert!(matches!(tls.trust, Trust::Pem { .. }));
        let pairs = props(&[
            ("sasl.jaas.config", "x"),
            ("ssl.ca.location", "y"),
            ("retries", "1"),
        ]);
        let c = SecurityConfig::from_properties(&pairs).unwrap();
        assert_eq!(
            c.unused_properties(&pairs),
            ["sasl.jaas.config", "ssl.ca.location"]
        );
    }
}
