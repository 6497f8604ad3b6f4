//! TLS over TCP with rustls: the broker's certificate and name are verified
//! (unless `ssl.endpoint.identification.algorithm` is empty), SNI is sent
//! for host names (never for IP addresses), and a client certificate is
//! presented when one is configured.
//!
//! As Java's trust manager does, a broker certificate that is itself, byte
//! for byte, one of the truststore's certificates is trusted (a self-signed
//! broker certificate placed in the truststore), its dates and name still
//! checked; webpki alone refuses such a certificate when it is marked as a
//! CA. Every failure is named in words, never as a Rust debug string.

use std::io;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_name, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    AlertDescription, CertificateError, DigitallySignedStruct, OtherError, RootCertStore,
    SignatureScheme,
};

use super::config::{Identity, TlsConfig, Trust};
use super::encrypted_key;
use super::ConfigError;
use crate::error::Error;
use crate::transport::{connect_tcp, BoxStream, BrokerAddress, ConnectFuture, Connector};

/// Opens TCP, then runs the TLS handshake over it.
pub struct TlsConnector {
    inner: tokio_rustls::TlsConnector,
    has_identity: bool,
}

impl std::fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConnector")
            .field("has_identity", &self.has_identity)
            .finish_non_exhaustive()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl TlsConnector {
    /// A connector that verifies brokers against `ssl.truststore.*` and presents the
    /// `ssl.keystore.*` identity, if any.
    pub fn new(config: &TlsConfig) -> Result<Self, ConfigError> {
        let provider = provider();
        let (roots, anchors) = roots(&config.trust)?;
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| {
                ConfigError::new(
                    trust_key(&config.trust),
                    format!("no usable CA certificate: {e}"),
                )
            })?;
        let verifier: Arc<dyn ServerCertVerifier> = Arc::new(BrokerVerifier {
            webpki,
            anchors,
            verify_hostname: config.verify_hostname,
        });
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigError::new("security.protocol", e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let client = match &config.identity {
            Some(id) => {
                let (chain, key) = identity(id)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    ConfigError::new(
                        id.origin.clone(),
                        format!("unusable client certificate or key: {e}"),
                    )
                })?
            }
            None => builder.with_no_client_auth(),
        };
        Ok(TlsConnector {
            inner: tokio_rustls::TlsConnector::from(Arc::new(client)),
            has_identity: config.identity.is_some(),
        })
    }
}

fn trust_key(trust: &Trust) -> String {
    match trust {
        Trust::System => "ssl.truststore.location".into(),
        Trust::Pem { origin, .. } => origin.clone(),
    }
}

/// The trust store, and the truststore's own certificates (PEM ones) as given.
type Roots = (RootCertStore, Vec<CertificateDer<'static>>);

fn roots(trust: &Trust) -> Result<Roots, ConfigError> {
    let mut roots = RootCertStore::empty();
    let mut anchors = Vec::new();
    match trust {
        Trust::System => {
            let found = rustls_native_certs::load_native_certs();
            for e in &found.errors {
                tracing::debug!(error = %e, "skipping a system CA store");
            }
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(ConfigError::new(
                    "ssl.truststore.location",
                    "no system CA certificates found: set ssl.truststore.type=PEM and ssl.truststore.location",
                ));
            }
        }
        Trust::Pem { origin, pem } => {
            let mut n = 0;
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                let cert = cert.map_err(|e| {
                    ConfigError::new(origin.clone(), format!("bad PEM certificate: {e}"))
                })?;
                roots.add(cert.clone()).map_err(|e| {
                    ConfigError::new(origin.clone(), format!("unusable CA certificate: {e}"))
                })?;
                anchors.push(cert);
                n += 1;
            }
            if n == 0 {
                return Err(ConfigError::new(origin.clone(), "no PEM certificate found"));
            }
        }
    }
    Ok((roots, anchors))
}

fn identity(
    id: &Identity,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ConfigError> {
    let chain = CertificateDer::pem_slice_iter(id.cert_chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::new(id.origin.clone(), format!("bad PEM certificate: {e}")))?;
    if chain.is_empty() {
        return Err(ConfigError::new(
            id.origin.clone(),
            "no client certificate found",
        ));
    }
    if let Some(password) = &id.key_password {
        if let Some(key) = encrypted_key::decrypt(&id.origin, id.key_pem.expose(), password)? {
            return Ok((chain, key));
        }
    }
    // the error of a key parser may quote key bytes: only its kind is kept
    let key = PrivateKeyDer::from_pem_slice(id.key_pem.expose().as_bytes()).map_err(|_| {
        ConfigError::new(
            id.origin.clone(),
            "no usable private key found (expected a PKCS#8, PKCS#1 or SEC1 PEM key)",
        )
    })?;
    Ok((chain, key))
}

impl Connector for TlsConnector {
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(async move {
            let tcp = connect_tcp(addr).await?;
            let name = ServerName::try_from(addr.host.clone()).map_err(|_| Error::Tls {
                addr: addr.to_string(),
                reason: format!("{:?} is not a valid TLS server name", addr.host),
            })?;
            let stream = self.inner.connect(name, tcp).await.map_err(|e| {
                let e = if e.kind() == io::ErrorKind::UnexpectedEof {
                    // what a PLAINTEXT listener does with a TLS hello
                    io::Error::new(
                        e.kind(),
                        "the broker closed the connection during the TLS handshake \
                         (is this port a TLS listener? check security.protocol)",
                    )
                } else {
                    e
                };
                Error::io(&addr.to_string(), e)
            })?;
            Ok(Box::new(stream) as BoxStream)
        })
    }
}

/// What a TLS failure inside an I/O error means, in words an operator can act
/// on; `None` if the error is not a TLS one.
pub(crate) fn explain(e: &io::Error) -> Option<String> {
    let tls = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some(tls_words(tls))
}

fn tls_words(tls: &rustls::Error) -> String {
    match tls {
        rustls::Error::InvalidCertificate(c) => certificate_words(c),
        rustls::Error::AlertReceived(
            a @ (AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::HandshakeFailure),
        ) => format!(
            "the broker rejected the TLS handshake ({}): missing or rejected client certificate \
             (set ssl.keystore.location or ssl.keystore.key and ssl.keystore.certificate.chain)",
            alert_name(*a)
        ),
        rustls::Error::AlertReceived(AlertDescription::UnknownCA) => {
            "the broker does not trust the client certificate (unknown CA)".into()
        }
        rustls::Error::AlertReceived(AlertDescription::CertificateExpired) => {
            "the broker rejected the client certificate: it has expired".into()
        }
        rustls::Error::AlertReceived(a) => {
            format!(
                "the broker ended the TLS session with the alert {}",
                alert_name(*a)
            )
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the broker's answer is not TLS (is this port a TLS listener? check security.protocol)"
                .into()
        }
        rustls::Error::InappropriateHandshakeMessage { .. } | rustls::Error::PeerMisbehaved(_) => {
            "the broker broke the TLS handshake protocol".into()
        }
        rustls::Error::PeerIncompatible(_) => {
            "the broker and kdp share no TLS version or cipher suite".into()
        }
        rustls::Error::NoCertificatesPresented => "the broker presented no certificate".into(),
        rustls::Error::DecryptError => "a TLS record from the broker cannot be decrypted".into(),
        rustls::Error::PeerSentOversizedRecord => "the broker sent an oversized TLS record".into(),
        rustls::Error::General(why) => format!("TLS failed: {why}"),
        _ => "the TLS handshake failed".into(),
    }
}

fn certificate_words(c: &CertificateError) -> String {
    match c {
        CertificateError::UnknownIssuer => "the broker's certificate is signed by an unknown CA \
            (untrusted: add the CA to ssl.truststore.location / ssl.truststore.certificates)"
            .into(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "hostname mismatch: the broker's certificate is not valid for this host name \
             (connect with a name the certificate lists)"
                .into()
        }
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "the broker's certificate has expired".into()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "the broker's certificate is not valid yet (check the clocks)".into()
        }
        CertificateError::Revoked => "the broker's certificate is revoked".into(),
        CertificateError::BadEncoding => "the broker's certificate is not valid DER".into(),
        CertificateError::BadSignature => {
            "the broker's certificate has a signature that does not verify".into()
        }
        CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "the broker's certificate is signed with an algorithm kdp does not support".into()
        }
        CertificateError::UnhandledCriticalExtension => {
            "the broker's certificate has a critical extension kdp does not know".into()
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "the broker's certificate is not for TLS servers (extended key usage)".into()
        }
        CertificateError::Other(o) => match webpki_error(o) {
            Some(webpki::Error::CaUsedAsEndEntity) => {
                "the broker presents a CA certificate as its own: put that very certificate in \
                 the truststore, or give the broker a certificate its CA signed"
                    .into()
            }
            Some(webpki::Error::EndEntityUsedAsCa) => {
                "the broker's chain uses a server certificate as a CA".into()
            }
            Some(webpki::Error::RequiredEkuNotFoundContext(_)) => {
                "the broker's certificate is not for TLS servers (extended key usage)".into()
            }
            Some(webpki::Error::UnsupportedCertVersion) => {
                "the broker's certificate is not an X.509 v3 certificate".into()
            }
            Some(webpki::Error::PathLenConstraintViolated) => {
                "the broker's chain is longer than its CA allows".into()
            }
            _ => "the broker's certificate chain is rejected".into(),
        },
        _ => "the broker's certificate is rejected".into(),
    }
}

fn webpki_error(o: &OtherError) -> Option<&webpki::Error> {
    o.0.downcast_ref::<webpki::Error>()
}

/// An alert by its name in the TLS specification (RFC 8446, section 6).
fn alert_name(a: AlertDescription) -> String {
    let name = match u8::from(a) {
        0 => "close_notify",
        10 => "unexpected_message",
        20 => "bad_record_mac",
        22 => "record_overflow",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        90 => "user_canceled",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        113 => "bad_certificate_status_response",
        115 => "unknown_psk_identity",
        116 => "certificate_required",
        120 => "no_application_protocol",
        other => return format!("number {other}"),
    };
    name.to_string()
}

/// webpki's verification, and what it refuses that Kafka's Java clients
/// accept: a broker certificate that is itself one of the truststore's
/// certificates. Without `verify_hostname`
/// (`ssl.endpoint.identification.algorithm=`) the name is not checked.
#[derive(Debug)]
struct BrokerVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    /// The truststore's certificates, as given.
    anchors: Vec<CertificateDer<'static>>,
    verify_hostname: bool,
}

impl BrokerVerifier {
    fn is_anchor(&self, cert: &CertificateDer<'_>) -> bool {
        self.anchors.iter().any(|a| a.as_ref() == cert.as_ref())
    }
}

impl ServerCertVerifier for BrokerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verdict = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verdict {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(o)))
                if matches!(webpki_error(&o), Some(webpki::Error::CaUsedAsEndEntity))
                    && self.is_anchor(end_entity) =>
            {
                // webpki checks the dates before the CA flag, so they passed;
                // the name is checked here
                if self.verify_hostname {
                    let cert = ParsedCertificate::try_from(end_entity)?;
                    verify_server_name(&cert, server_name)?;
                }
                Ok(ServerCertVerified::assertion())
            }
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.verify_hostname => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}
