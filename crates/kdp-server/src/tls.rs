//! TLS for the mock's listeners (rustls): a certificate chain and key from
//! PEM, and optionally the CAs a client certificate must chain to (mutual
//! TLS, Kafka's `ssl.client.auth=required`).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};

/// Why the TLS material cannot be used; names the file's role, never key bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {message}")]
pub struct TlsError {
    /// Which input: `certificate`, `key` or `client CA`.
    pub what: &'static str,
    /// What is wrong with it.
    pub message: String,
}

fn err(what: &'static str, message: impl Into<String>) -> TlsError {
    TlsError {
        what,
        message: message.into(),
    }
}

/// The PEM inputs of a TLS listener.
#[derive(Clone, Copy)]
pub struct TlsPem<'a> {
    /// The server's certificate chain, leaf first.
    pub cert_chain: &'a [u8],
    /// The server's private key (PKCS#8, PKCS#1 or SEC1), unencrypted.
    pub key: &'a [u8],
    /// If set, clients must present a certificate chaining to one of these.
    pub client_ca: Option<&'a [u8]>,
}

fn certificates(what: &'static str, pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(what, format!("bad PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(err(what, "no PEM certificate found"));
    }
    Ok(certs)
}

/// The rustls configuration of a listener serving `pem`.
pub fn server_config(pem: TlsPem<'_>) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certificates("certificate", pem.cert_chain)?;
    // The parser's error could quote the input: say only what was expected.
    let key = PrivateKeyDer::from_pem_slice(pem.key).map_err(|_| {
        err(
            "key",
            "no unencrypted PEM private key found (PKCS#8, PKCS#1 or SEC1)",
        )
    })?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| err("certificate", e.to_string()))?;
    let builder = match pem.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates("client CA", ca)? {
                roots
                    .add(cert)
                    .map_err(|e| err("client CA", format!("unusable CA certificate: {e}")))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| err("client CA", e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(chain, key).map_err(|e| {
        err(
            "key",
            format!("does not match the certificate or is unusable: {e}"),
        )
    })?;
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_inputs_are_named() {
        let e = server_config(TlsPem {
            cert_chain: b"not pem",
            key: b"",
            client_ca: None,
        })
        .unwrap_err();
        assert_eq!(e.what, "certificate");
        let cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        let e = server_config(TlsPem {
            cert_chain: cert.as_bytes(),
            key: b"-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n",
            client_ca: None,
        })
        .unwrap_err();
        assert_eq!(e.what, "key", "{e}");
        assert!(!e.to_string().contains("c2VjcmV0"), "{e}");
    }
}
