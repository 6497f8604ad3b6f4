//! pbeWithSHAAnd3-KeyTripleDES-CBC (RFC 7292 appendix C), the password-based
//! scheme of `openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES`: the only encrypted
//! PKCS#8 key that Kafka's clients read on Java 17 (which has no PBES2), so
//! one properties file can serve kdp and `kafka-transactions.sh` there too.
//!
//! The PKCS#12 key derivation with SHA-1 turns the password, salt and
//! iteration count into a 24-byte DES-EDE3 key and an 8-byte IV; the key is
//! DES-EDE3-CBC with PKCS#7 padding.

use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};
use pkcs12::kdf::{derive_key_utf8, Pkcs12KeyType};
use pkcs8::der::asn1::{AnyRef, OctetStringRef};
use pkcs8::der::{Decode, Reader, SliceReader, Tag, Tagged};
use zeroize::Zeroizing;

/// The scheme's OID, 1.2.840.113549.1.12.1.3.
pub(crate) const OID: pkcs8::ObjectIdentifier = pkcs12::PKCS_12_PBE_WITH_SHAAND3_KEY_TRIPLE_DES_CBC;

/// More rounds than any tool writes (OpenSSL: 2048, Java: 10,000); bounds the
/// work a damaged or hostile file can ask for.
const MAX_ITERATIONS: u32 = 10_000_000;

/// Why a key could not be decrypted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The parameters are not `SEQUENCE { salt OCTET STRING, iterations INTEGER }`
    /// (or ask for more than `MAX_ITERATIONS`).
    Parameters,
    /// The padding or the decrypted key is wrong: almost always the password.
    Decrypt,
}

/// The PKCS#8 `PrivateKeyInfo` DER inside `encrypted`, the algorithm's
/// `parameters` given.
pub(crate) fn decrypt(
    parameters: Option<AnyRef<'_>>,
    encrypted: &[u8],
    password: &str,
) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let (salt, iterations) = parameters
        .and_then(|p| params(p).ok())
        .filter(|(_, n)| (1..=MAX_ITERATIONS).contains(n))
        .ok_or(Failure::Parameters)?;
    let rounds = i32::try_from(iterations).map_err(|_| Failure::Parameters)?;
    let derive = |id, len| {
        derive_key_utf8::<sha1::Sha1>(password, salt, id, rounds, len)
            .map(Zeroizing::new)
            .map_err(|_| Failure::Decrypt)
    };
    let key = derive(Pkcs12KeyType::EncryptionKey, 24)?;
    let iv = derive(Pkcs12KeyType::Iv, 8)?;
    let cipher = cbc::Decryptor::<des::TdesEde3>::new_from_slices(&key, &iv)
        .map_err(|_| Failure::Decrypt)?;
    let mut buf = Zeroizing::new(encrypted.to_vec());
    let plain = cipher
        .decrypt_padded_mut::<Pkcs7>(&mut buf)
        .map_err(|_| Failure::Decrypt)?;
    // a wrong password passes the padding check once in ~256 tries: the key must parse too
    pkcs8::PrivateKeyInfo::from_der(plain).map_err(|_| Failure::Decrypt)?;
    Ok(Zeroizing::new(plain.to_vec()))
}

/// `SEQUENCE { salt OCTET STRING, iterations INTEGER }`.
fn params(p: AnyRef<'_>) -> pkcs8::der::Result<(&[u8], u32)> {
    p.tag().assert_eq(Tag::Sequence)?;
    let mut r = SliceReader::new(p.value())?;
    let salt: OctetStringRef<'_> = r.decode()?;
    let iterations: u32 = r.decode()?;
    r.finish(())?;
    Ok((salt.as_bytes(), iterations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pkcs8::der::Encode;
    use pkcs8::spki::AlgorithmIdentifierRef;

    // see testdata/README.md
    const PLAIN_DER: &[u8] = include_bytes!("testdata/key.pk8.der");
    const PEM: &str = include_str!("testdata/pbe-sha1-3des.pem");

    /// The algorithm and the encrypted bytes of the test vector.
    fn vector() -> (Vec<u8>, Vec<u8>) {
        let (_, doc) = pkcs8::der::Document::from_pem(PEM).expect("the test vector's PEM");
        let mut r = SliceReader::new(doc.as_bytes()).unwrap();
        r.sequence(|r| {
            let alg: AlgorithmIdentifierRef<'_> = r.decode()?;
            let data: OctetStringRef<'_> = r.decode()?;
            assert_eq!(alg.oid, OID);
            Ok((alg.to_der()?, data.as_bytes().to_vec()))
        })
        .unwrap()
    }

    fn open(alg: &[u8], data: &[u8], password: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
        let alg = AlgorithmIdentifierRef::from_der(alg).unwrap();
        decrypt(alg.parameters, data, password)
    }

    #[test]
    fn openssls_pbe_sha1_3des_key_decrypts_to_the_plain_key() {
        let (alg, data) = vector();
        assert_eq!(open(&alg, &data, "kdp-test").unwrap().as_slice(), PLAIN_DER);
    }

    #[test]
    fn a_wrong_password_or_damaged_data_is_a_decrypt_failure() {
        let (alg, data) = vector();
        assert_eq!(open(&alg, &data, "kdp-tesT"), Err(Failure::Decrypt));
        let mut flipped = data.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(open(&alg, &flipped, "kdp-test"), Err(Failure::Decrypt));
        // not a whole number of DES blocks
        assert_eq!(
            open(&alg, &data[..data.len() - 3], "kdp-test"),
            Err(Failure::Decrypt)
        );
        assert_eq!(open(&alg, &[], "kdp-test"), Err(Failure::Decrypt));
    }

    #[test]
    fn parameters_that_are_missing_malformed_or_too_costly_are_refused() {
        let (_, data) = vector();
        assert_eq!(decrypt(None, &data, "kdp-test"), Err(Failure::Parameters));
        let with = |params: &[u8]| {
            let any = AnyRef::from_der(params).unwrap();
            decrypt(Some(any), &data, "kdp-test")
        };
        // SEQUENCE { OCTET STRING 0102, INTEGER n }
        let seq = |n: &[u8]| {
            let mut v = vec![
                0x30,
                (4 + 2 + n.len()) as u8,
                0x04,
                0x02,
                1,
                2,
                0x02,
                n.len() as u8,
            ];
            v.extend_from_slice(n);
            v
        };
        assert_eq!(with(&seq(&[0])), Err(Failure::Parameters), "zero rounds");
        assert_eq!(
            with(&seq(&[0x7f, 0xff, 0xff, 0xff])),
            Err(Failure::Parameters),
            "2^31-1 rounds"
        );
        assert_eq!(
            with(&[0x04, 0x01, 0x00]),
            Err(Failure::Parameters),
            "not a SEQUENCE"
        );
        assert_eq!(
            with(&[0x30, 0x03, 0x04, 0x01, 0x00]),
            Err(Failure::Parameters),
            "no iterations"
        );
    }
}
