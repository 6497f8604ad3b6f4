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
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::config::{Identity, TlsConfig, Trust};
use super::encrypted_key;
use super::tls_words::webpki_error;
use crate::error::Error;
use crate::security::config_error::ConfigError;
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
