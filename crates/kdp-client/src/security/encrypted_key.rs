//! An encrypted PKCS#8 private key (`-----BEGIN ENCRYPTED PRIVATE KEY-----`)
//! opened with `ssl.key.password`.
//!
//! kdp reads PBES2 with PBKDF2 (HMAC-SHA-1 or SHA-2) or scrypt and AES-CBC
//! (what `openssl pkcs8 -topk8` writes; Kafka's Java clients read it on Java
//! 25, not on Java 17), and pbeWithSHA1And3-KeyTripleDES-CBC (`-v1
//! PBE-SHA1-3DES`; read on Java 17 and 25): see docs/SECURITY.md. Other
//! schemes are refused by name with the command that re-encrypts the key.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use pkcs8::der::asn1::{ObjectIdentifier, OctetStringRef};
use pkcs8::der::{Decode, Reader, SliceReader};
use pkcs8::spki::AlgorithmIdentifierRef;
use rustls::pki_types::PrivateKeyDer;

use super::pbe_sha1_3des;
use super::secret::Secret;
use crate::security::config_error::ConfigError;

const LABEL: &str = "ENCRYPTED PRIVATE KEY";

/// The key of the first encrypted PKCS#8 block of `text`, decrypted with
/// `password`; `Ok(None)` when `text` holds no such block.
pub(crate) fn decrypt(
    origin: &str,
    text: &str,
    password: &Secret,
) -> Result<Option<PrivateKeyDer<'static>>, ConfigError> {
    let bad = |what: String| ConfigError::new(origin.to_string(), what);
    let Some(body) = pem_body(text, LABEL) else {
        return Ok(None);
    };
    // Java reads the base64 wrapped at any width or on one line (as an
    // `ssl.keystore.key` value is often written): so does kdp
    let der: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = B64
        .decode(der)
        .map_err(|_| bad("the encrypted private key is not valid PEM (bad base64)".into()))?;
    let wrong_password = || bad("cannot decrypt the private key: wrong ssl.key.password".into());
    let Ok(info) = pkcs8::EncryptedPrivateKeyInfo::from_der(&der) else {
        // a scheme pkcs8 does not know: Java 17's PBES1, or one kdp refuses by name
        return match outer(&der) {
            Some((alg, data)) if alg.oid == pbe_sha1_3des::OID => {
                match pbe_sha1_3des::decrypt(alg.parameters, data, password.expose()) {
                    Ok(plain) => Ok(Some(PrivateKeyDer::Pkcs8(plain.to_vec().into()))),
                    Err(pbe_sha1_3des::Failure::Decrypt) => Err(wrong_password()),
                    Err(pbe_sha1_3des::Failure::Parameters) => Err(bad(
                        "the encrypted private key's pbeWithSHA1And3-KeyTripleDES-CBC parameters \
                         are malformed"
                            .into(),
                    )),
                }
            }
            Some((alg, _)) => Err(bad(unsupported(alg.oid))),
            None => Err(bad("the encrypted private key is not PKCS#8".into())),
        };
    };
    let plain = info
        .decrypt(password.expose().as_bytes())
        .map_err(|_| wrong_password())?;
    Ok(Some(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into())))
}

/// The text between `-----BEGIN {label}-----` and `-----END {label}-----`.
fn pem_body<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let from = text.find(&begin)? + begin.len();
    let rest = text.get(from..)?;
    rest.get(..rest.find(&end)?)
}

/// An EncryptedPrivateKeyInfo's algorithm and encrypted data, whatever the
/// algorithm.
fn outer(der: &[u8]) -> Option<(AlgorithmIdentifierRef<'_>, &[u8])> {
    let mut r = SliceReader::new(der).ok()?;
    let (alg, data) = r
        .sequence(|r| {
            let alg: AlgorithmIdentifierRef<'_> = r.decode()?;
            let data: OctetStringRef<'_> = r.decode()?;
            Ok((alg, data.as_bytes()))
        })
        .ok()?;
    r.finish((alg, data)).ok()
}

/// Why a key encrypted with `oid` is refused, and how to convert it.
fn unsupported(oid: ObjectIdentifier) -> String {
    let dotted = oid.to_string();
    let name = match dotted.as_str() {
        "1.2.840.113549.1.5.13" => "PBES2 with a cipher other than AES-CBC".to_string(),
        d if d.starts_with("1.2.840.113549.1.12.1.") => format!("PKCS#12 PBE {d}"),
        d if d.starts_with("1.2.840.113549.1.5.") => format!("PBES1 {d}"),
        d => format!("the scheme {d}"),
    };
    format!(
        "the private key is encrypted with {name}, which kdp does not read; re-encrypt it with \
         PBES2 and AES (read by kdp and by Kafka on Java 25): \
         openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY.pem -out KEY-aes.pem"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // one throwaway key and its encryptions: see testdata/README.md
    const PASSWORD: &str = "kdp-test";
    const PLAIN_DER: &[u8] = include_bytes!("testdata/key.pk8.der");
    const AES256_SHA256: &str = include_str!("testdata/aes256-sha256.pem");
    const AES128_SHA1: &str = include_str!("testdata/aes128-sha1.pem");
    const PBE_SHA1_3DES: &str = include_str!("testdata/pbe-sha1-3des.pem");
    const PBES2_DES3: &str = include_str!("testdata/pbes2-des3.pem");

    fn open(text: &str) -> Result<Option<PrivateKeyDer<'static>>, ConfigError> {
        decrypt("test key", text, &Secret::new(PASSWORD))
    }

    fn one_line(pem: &str) -> String {
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        format!("-----BEGIN {LABEL}-----\n{body}\n-----END {LABEL}-----\n")
    }

    #[test]
    fn pbes2_and_pbe_sha1_3des_keys_open_whatever_the_line_breaks() {
        for (what, pem) in [
            ("-v2 aes-256-cbc", AES256_SHA256),
            ("-v2 aes-128-cbc -v2prf hmacWithSHA1", AES128_SHA1),
            ("-v1 PBE-SHA1-3DES", PBE_SHA1_3DES),
        ] {
            let want = open(pem).unwrap_or_else(|e| panic!("{what}: {e}"));
            let Some(PrivateKeyDer::Pkcs8(want)) = want else {
                panic!("{what}: no PKCS#8 key");
            };
            assert_eq!(want.secret_pkcs8_der(), PLAIN_DER, "{what}");
            // the base64 on one line, as in an ssl.keystore.key property; CRLF line ends
            for text in [one_line(pem), pem.replace('\n', "\r\n")] {
                match open(&text) {
                    Ok(Some(PrivateKeyDer::Pkcs8(k))) => {
                        assert_eq!(k.secret_pkcs8_der(), PLAIN_DER, "{what}")
                    }
                    other => panic!("{what}: {:?}", other.map(|k| k.is_some())),
                }
            }
        }
    }

    #[test]
    fn a_wrong_password_is_named_and_not_quoted() {
        for pem in [AES256_SHA256, PBE_SHA1_3DES] {
            let e = decrypt("test key", pem, &Secret::new("not-the-password")).unwrap_err();
            assert!(e.to_string().contains("wrong ssl.key.password"), "{e}");
            assert!(!e.to_string().contains("not-the-password"), "{e}");
        }
    }

    #[test]
    fn other_schemes_are_refused_by_name_with_the_command_that_converts_them() {
        // pbeWithSHAAnd2-KeyTripleDES-CBC: the 3DES vector with its OID's last arc 3 -> 4
        let der = B64
            .decode(
                PBE_SHA1_3DES
                    .lines()
                    .filter(|l| !l.starts_with("-----"))
                    .collect::<String>(),
            )
            .unwrap();
        let oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c, 0x01, 0x03];
        let at = der
            .windows(oid.len())
            .position(|w| w == oid)
            .expect("the OID");
        let mut two_key = der.clone();
        two_key[at + oid.len() - 1] = 0x04;
        let two_key = format!(
            "-----BEGIN {LABEL}-----\n{}\n-----END {LABEL}-----\n",
            B64.encode(two_key)
        );
        for (pem, name) in [
            (PBES2_DES3, "PBES2 with a cipher other than AES-CBC"),
            (two_key.as_str(), "PKCS#12 PBE 1.2.840.113549.1.12.1.4"),
        ] {
            let e = open(pem).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
            assert!(e.contains("openssl pkcs8 -topk8 -v2 aes-256-cbc"), "{e}");
        }
    }

    #[test]
    fn damaged_text_is_an_error_never_a_panic() {
        let first: Vec<&str> = AES256_SHA256.lines().take(2).collect();
        for text in [
            format!("-----BEGIN {LABEL}-----\n!!!!\n-----END {LABEL}-----"),
            // truncated DER
            format!("{}\n{}\n-----END {LABEL}-----", first[0], first[1]),
            // DER that is no EncryptedPrivateKeyInfo
            format!("-----BEGIN {LABEL}-----\nMAMCAQA=\n-----END {LABEL}-----"),
        ] {
            assert!(open(&text).is_err(), "{text}");
        }
        for text in [
            "no key here".to_string(),
            format!("-----BEGIN {LABEL}-----\n"),
            format!("-----END {LABEL}----- -----BEGIN {LABEL}-----"),
        ] {
            assert!(matches!(open(&text), Ok(None)), "{text}");
        }
    }
}
