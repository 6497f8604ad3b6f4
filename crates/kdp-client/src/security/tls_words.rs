//! TLS failures in words an operator can act on: what a rustls error
//! inside an I/O error means (an untrusted or expired certificate, a
//! rejected client certificate, a port that does not speak TLS), never a
//! Rust debug string. The client's errors read it ([`crate::error`]).

use std::io;

use rustls::{AlertDescription, CertificateError, OtherError};

/// What a TLS failure inside an I/O error means, in words an operator can act
/// on; `None` if the error is not a TLS one.
pub fn explain(e: &io::Error) -> Option<String> {
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

/// The webpki error inside a rustls `Other` error, if it is one.
pub fn webpki_error(o: &OtherError) -> Option<&webpki::Error> {
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
