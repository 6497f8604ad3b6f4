//! The principal of a TLS client certificate, as Kafka's
//! `DefaultKafkaPrincipalBuilder` makes it on an SSL listener (with the
//! default `ssl.principal.mapping.rules`): `User:` and the certificate's
//! subject in RFC 2253 form, as Java's `X500Principal.getName()` writes it
//! (`CN=client,OU=eng,O=acme`: the last RDN first).
//!
//! The certificate was verified by rustls before this runs, yet it is still
//! client input: the DER is walked with checked slices only, and anything
//! unexpected gives `None` (the connection then stays `User:ANONYMOUS`).

/// One DER element: its tag, its content, and what follows it.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let (bytes, rest) = (rest.get(..n)?, rest.get(n..)?);
        let len = bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, rest)
    };
    Some((tag, rest.get(..len)?, rest.get(len..)?))
}

/// The element at the start of `input`, whole (tag and length included).
fn whole(input: &[u8]) -> Option<&[u8]> {
    let (_, _, rest) = tlv(input)?;
    input.get(..input.len() - rest.len())
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;

/// RFC 2253's keywords (the ones `X500Principal.getName()` uses), by OID content bytes.
fn keyword(oid: &[u8]) -> Option<&'static str> {
    Some(match oid {
        [0x55, 0x04, 0x03] => "CN",
        [0x55, 0x04, 0x06] => "C",
        [0x55, 0x04, 0x07] => "L",
        [0x55, 0x04, 0x08] => "ST",
        [0x55, 0x04, 0x09] => "STREET",
        [0x55, 0x04, 0x0a] => "O",
        [0x55, 0x04, 0x0b] => "OU",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19] => "DC",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x01] => "UID",
        _ => return None,
    })
}

/// An OID in dotted form, for attribute types without a keyword.
fn dotted(oid: &[u8]) -> Option<String> {
    let (&first, rest) = oid.split_first()?;
    // The first byte holds two arcs: 40 * a + b, with a at most 2.
    let a = u64::from(first / 40).min(2);
    let mut parts = vec![a, u64::from(first) - a * 40];
    let mut acc: u64 = 0;
    for &b in rest {
        acc = acc.checked_mul(128)? | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            parts.push(acc);
            acc = 0;
        }
    }
    Some(
        parts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// A string value with RFC 2253's escapes.
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let last = s.chars().count().saturating_sub(1);
    for (i, c) in s.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One `type=value` of an RDN.
fn attribute(atv: &[u8]) -> Option<String> {
    let (tag, body, _) = tlv(atv)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, oid, rest) = tlv(body)?;
    if tag != OID {
        return None;
    }
    let (value_tag, value, _) = tlv(rest)?;
    let text = match value_tag {
        // UTF8String, PrintableString, IA5String, TeletexString (read as Latin-1 by Java; ASCII here)
        0x0c | 0x13 | 0x16 | 0x14 => std::str::from_utf8(value).ok().map(str::to_string),
        // BMPString: UTF-16BE
        0x1e => {
            let units: Option<Vec<u16>> = value
                .chunks_exact(2)
                .map(|c| <[u8; 2]>::try_from(c).ok().map(u16::from_be_bytes))
                .collect();
            units.and_then(|u| String::from_utf16(&u).ok())
        }
        _ => None,
    };
    match (keyword(oid), text) {
        (Some(k), Some(t)) => Some(format!("{k}={}", escaped(&t))),
        // No keyword (or no string): the dotted OID and the value's DER in hex.
        _ => {
            let der = whole(rest)?;
            let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
            Some(format!("{}=#{hex}", dotted(oid)?))
        }
    }
}

/// The subject of a DER certificate in RFC 2253 form; `None` if the
/// certificate cannot be read that far.
pub fn subject(cert_der: &[u8]) -> Option<String> {
    let (tag, cert, _) = tlv(cert_der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, _) = tlv(cert)?;
    if tag != SEQUENCE {
        return None;
    }
    let mut rest = tbs;
    // [0] version, if present
    if rest.first() == Some(&0xa0) {
        rest = tlv(rest)?.2;
    }
    // serialNumber, signature, issuer, validity
    for _ in 0..4 {
        rest = tlv(rest)?.2;
    }
    let (tag, mut rdns, _) = tlv(rest)?;
    if tag != SEQUENCE {
        return None;
    }
    let mut names = Vec::new();
    while !rdns.is_empty() {
        let (tag, mut set, next) = tlv(rdns)?;
        if tag != SET {
            return None;
        }
        let mut parts = Vec::new();
        while !set.is_empty() {
            let atv = whole(set)?;
            parts.push(attribute(atv)?);
            set = set.get(atv.len()..)?;
        }
        names.push(parts.join("+"));
        rdns = next;
    }
    names.reverse();
    Some(names.join(","))
}

/// `User:<subject>` for a client certificate, as Kafka names an SSL client.
pub fn principal(cert_der: &[u8]) -> Option<String> {
    subject(cert_der).map(|s| format!("User:{s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_oids() {
        assert_eq!(escaped("a,b+c"), "a\\,b\\+c");
        assert_eq!(escaped(" #x "), "\\ #x\\ ");
        assert_eq!(escaped("#"), "\\#");
        assert_eq!(
            dotted(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01]).as_deref(),
            Some("1.2.840.113549.1.9.1")
        );
    }

    #[test]
    fn truncated_and_garbage_input_gives_none() {
        assert_eq!(subject(&[]), None);
        assert_eq!(subject(&[0x30]), None);
        assert_eq!(subject(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(subject(&[0x30, 0x85, 0, 0, 0, 0, 1]), None);
        assert_eq!(subject(&[0x30, 0x02, 0x30, 0x00]), None);
        assert_eq!(subject(b"not a certificate"), None);
    }

    #[test]
    fn the_subject_of_a_real_certificate_last_rdn_first() {
        use rcgen::{CertificateParams, DnType, KeyPair};
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(DnType::CountryName, "DE");
        p.distinguished_name
            .push(DnType::OrganizationName, "acme, inc");
        p.distinguished_name.push(DnType::CommonName, "client-1");
        let key = KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        assert_eq!(
            principal(cert.der()).as_deref(),
            Some("User:CN=client-1,O=acme\\, inc,C=DE")
        );
        // Every prefix of it fails cleanly.
        for cut in 0..cert.der().len() {
            let _ = subject(&cert.der()[..cut]);
        }
    }
}
