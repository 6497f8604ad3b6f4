//! The TLS connector against a local rustls server with certificates made
//! here: verification on by default, SNI, mutual TLS, and a failure that
//! names its cause for each way a handshake goes wrong.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kdp_client::security::tls::TlsConnector;
use kdp_client::security::{Identity, Secret, TlsConfig, Trust};
use kdp_client::{BrokerAddress, Connection, ConnectionConfig, Connector, Error};
use kdp_wire::messages::ApiVersionsRequest;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

struct Pki {
    ca_pem: String,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

struct Leaf {
    cert_pem: String,
    key_pem: String,
}

impl Pki {
    fn new(name: &str) -> Self {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let ca_key = KeyPair::generate().unwrap();
        let ca = p.self_signed(&ca_key).unwrap();
        Pki {
            ca_pem: ca.pem(),
            ca,
            ca_key,
        }
    }

    fn leaf(&self, cn: &str, names: &[&str], expired: bool) -> Leaf {
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        if expired {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2020, 1, 2);
        }
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

/// What the server saw of a client: the SNI name and whether it showed a certificate.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    sni: Option<String>,
    client_cert: bool,
}

/// A TLS server on 127.0.0.1 that accepts one connection at a time and then
/// reads until the client goes away.
async fn server(leaf: &Leaf, client_ca: Option<&str>) -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = vec![CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let config = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
                .unwrap();
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder
                .with_client_cert_verifier(verifier)
                .with_single_cert(chain, key)
                .unwrap()
        }
        None => builder
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let seen = seen2.clone();
            tokio::spawn(async move {
                if let Ok(mut tls) = acceptor.accept(tcp).await {
                    let (_, conn) = tls.get_ref();
                    seen.lock().unwrap().push(Seen {
                        sni: conn.server_name().map(str::to_string),
                        client_cert: conn.peer_certificates().is_some_and(|c| !c.is_empty()),
                    });
                    let mut buf = [0u8; 1024];
                    while matches!(tls.read(&mut buf).await, Ok(n) if n > 0) {}
                }
            });
        }
    });
    (addr, seen)
}

fn config(ca_pem: &str, identity: Option<&Leaf>) -> TlsConfig {
    TlsConfig {
        trust: Trust::Pem {
            origin: "test CA".into(),
            pem: ca_pem.to_string(),
        },
        identity: identity.map(|l| Identity {
            origin: "test client".into(),
            cert_chain_pem: l.cert_pem.clone(),
            key_pem: Secret::new(l.key_pem.clone()),
            key_password: None,
        }),
        verify_hostname: true,
    }
}

async fn connect(cfg: &TlsConfig, host: &str, port: u16) -> Result<(), Error> {
    let c = TlsConnector::new(cfg).unwrap();
    c.connect(&BrokerAddress::new(host, port)).await.map(drop)
}

/// The server's records once it has `n` (it finishes its side of the
/// handshake after the client does).
async fn wait_seen(seen: &Mutex<Vec<Seen>>, n: usize) -> Vec<Seen> {
    loop {
        let s = seen.lock().unwrap().clone();
        if s.len() >= n {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn tls_reason(e: Error) -> String {
    match e {
        Error::Tls { reason, .. } => reason,
        other => panic!("not a TLS error: {other}"),
    }
}

#[tokio::test]
async fn verified_connections_send_sni_for_names_only() {
    let pki = Pki::new("ca");
    let (addr, seen) = server(
        &pki.leaf("broker", &["localhost", "127.0.0.1"], false),
        None,
    )
    .await;
    let cfg = config(&pki.ca_pem, None);
    connect(&cfg, "localhost", addr.port()).await.unwrap();
    wait_seen(&seen, 1).await;
    connect(&cfg, "127.0.0.1", addr.port()).await.unwrap();
    let seen = wait_seen(&seen, 2).await;
    let snis: Vec<_> = seen.iter().map(|s| s.sni.clone()).collect();
    assert_eq!(
        snis,
        [Some("localhost".to_string()), None],
        "no SNI for an IP address"
    );
}

#[tokio::test]
async fn server_certificate_failures_name_their_cause() {
    let pki = Pki::new("ca");
    let other = Pki::new("other");
    let (good, _) = server(
        &pki.leaf("broker", &["localhost", "127.0.0.1"], false),
        None,
    )
    .await;
    let (wrong, _) = server(&pki.leaf("broker", &["wrong.example.invalid"], false), None).await;
    let (expired, _) = server(&pki.leaf("broker", &["127.0.0.1"], true), None).await;

    let e = connect(&config(&other.ca_pem, None), "127.0.0.1", good.port())
        .await
        .unwrap_err();
    assert!(tls_reason(e).contains("unknown CA"));
    let e = connect(&config(&pki.ca_pem, None), "127.0.0.1", wrong.port())
        .await
        .unwrap_err();
    assert!(tls_reason(e).contains("hostname mismatch"));
    let e = connect(&config(&pki.ca_pem, None), "127.0.0.1", expired.port())
        .await
        .unwrap_err();
    assert!(tls_reason(e).contains("expired"));
    // ssl.endpoint.identification.algorithm= (empty): the name is not checked, the CA still is
    let mut lax = config(&pki.ca_pem, None);
    lax.verify_hostname = false;
    connect(&lax, "127.0.0.1", wrong.port()).await.unwrap();
    let mut lax_other = config(&other.ca_pem, None);
    lax_other.verify_hostname = false;
    assert!(tls_reason(
        connect(&lax_other, "127.0.0.1", wrong.port())
            .await
            .unwrap_err()
    )
    .contains("unknown CA"));
}

#[tokio::test]
async fn mutual_tls_presents_the_client_certificate_and_names_a_missing_one() {
    let pki = Pki::new("ca");
    let (addr, seen) = server(
        &pki.leaf("broker", &["127.0.0.1"], false),
        Some(&pki.ca_pem),
    )
    .await;
    let client = pki.leaf("admin", &["client"], false);
    connect(
        &config(&pki.ca_pem, Some(&client)),
        "127.0.0.1",
        addr.port(),
    )
    .await
    .unwrap();
    assert!(wait_seen(&seen, 1).await[0].client_cert);

    // TLS 1.3: the client's handshake ends before the server's verdict, which
    // arrives as an alert on the first read
    let c = TlsConnector::new(&config(&pki.ca_pem, None)).unwrap();
    let err = match c
        .connect(&BrokerAddress::new("127.0.0.1", addr.port()))
        .await
    {
        Err(e) => e,
        Ok(stream) => {
            let conn = Connection::new(stream, addr.to_string(), ConnectionConfig::default());
            conn.send(&ApiVersionsRequest::default(), 0)
                .await
                .unwrap_err()
        }
    };
    let reason = tls_reason(err);
    assert!(reason.contains("client certificate"), "{reason}");
}

#[test]
fn keys_never_reach_debug_output() {
    let pki = Pki::new("ca");
    let client = pki.leaf("admin", &["client"], false);
    let cfg = config(&pki.ca_pem, Some(&client));
    let body: String = client
        .key_pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    assert!(!format!("{cfg:?}").contains(&body[..20]));
}

/// `openssl pkcs8 -topk8 -v2 aes-256-cbc`: what `ssl.key.password` is for.
fn encrypt_with_openssl(key_pem: &str, password: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("openssl")
        .args(["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-passout"])
        .arg(format!("pass:{password}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("openssl (the secure-broker tests need it too)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(key_pem.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn an_encrypted_client_key_is_decrypted_with_ssl_key_password() {
    let pki = Pki::new("ca");
    let (addr, seen) = server(
        &pki.leaf("broker", &["127.0.0.1"], false),
        Some(&pki.ca_pem),
    )
    .await;
    let client = pki.leaf("admin", &["client"], false);
    let encrypted = Leaf {
        cert_pem: client.cert_pem.clone(),
        key_pem: encrypt_with_openssl(&client.key_pem, "s3cret-pw"),
    };
    assert!(encrypted.key_pem.contains("BEGIN ENCRYPTED PRIVATE KEY"));
    let mut cfg = config(&pki.ca_pem, Some(&encrypted));
    cfg.identity.as_mut().unwrap().key_password = Some(Secret::new("s3cret-pw"));
    connect(&cfg, "127.0.0.1", addr.port()).await.unwrap();
    assert!(wait_seen(&seen, 1).await[0].client_cert);

    cfg.identity.as_mut().unwrap().key_password = Some(Secret::new("wrong-pw"));
    let e = TlsConnector::new(&cfg).unwrap_err();
    assert!(e.message.contains("cannot decrypt the private key"), "{e}");
    assert!(!e.to_string().contains("wrong-pw"));
}

/// A self-signed broker certificate marked as a CA (as `openssl req -x509`
/// makes one), valid for `names`, from `not_after` on expired if given.
fn self_signed_ca(names: &[&str], expired: bool) -> Leaf {
    let mut p =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, "broker");
    if expired {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2020, 1, 2);
    }
    let key = KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    Leaf {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

/// Java's trust manager accepts a broker certificate that is itself in the
/// truststore; so does kdp, still checking its name and dates. Any other
/// self-signed certificate is refused, and no failure reads as a Rust
/// debug string.
#[tokio::test]
async fn a_self_signed_broker_certificate_in_the_truststore_is_trusted() {
    let broker = self_signed_ca(&["localhost"], false);
    let (addr, _) = server(&broker, None).await;
    // the truststore holds the broker's own certificate (beside another CA)
    let other = Pki::new("other");
    let both = format!("{}{}", other.ca_pem, broker.cert_pem);
    connect(&config(&both, None), "localhost", addr.port())
        .await
        .unwrap();

    // the name is still checked...
    let e = connect(&config(&broker.cert_pem, None), "127.0.0.1", addr.port())
        .await
        .unwrap_err();
    assert!(tls_reason(e).contains("hostname mismatch"));
    // ...unless ssl.endpoint.identification.algorithm is empty
    let mut lax = config(&broker.cert_pem, None);
    lax.verify_hostname = false;
    connect(&lax, "127.0.0.1", addr.port()).await.unwrap();

    // so are the dates
    let stale = self_signed_ca(&["localhost"], true);
    let (stale_addr, _) = server(&stale, None).await;
    let e = connect(
        &config(&stale.cert_pem, None),
        "localhost",
        stale_addr.port(),
    )
    .await
    .unwrap_err();
    assert!(tls_reason(e).contains("expired"));

    // a self-signed CA certificate that is not in the truststore is refused,
    // in words, not as `Other(OtherError(CaUsedAsEndEntity))`
    let e = connect(&config(&other.ca_pem, None), "localhost", addr.port())
        .await
        .unwrap_err();
    let reason = tls_reason(e);
    assert!(reason.contains("CA certificate as its own"), "{reason}");
    assert!(
        !reason.contains("Other(") && !reason.contains("Error"),
        "{reason}"
    );
}

/// The server side of a TLS listener over an in-memory stream: a PLAINTEXT
/// client's request meets a TLS server.
struct TlsPort(tokio_rustls::TlsAcceptor);

impl Connector for TlsPort {
    fn connect<'a>(&'a self, _addr: &'a BrokerAddress) -> kdp_client::ConnectFuture<'a> {
        Box::pin(async move {
            let (client, server) = tokio::io::duplex(64 * 1024);
            let acceptor = self.0.clone();
            tokio::spawn(async move {
                // the handshake fails on a Kafka frame; rustls answers with an alert
                let _ = acceptor.accept(server).await;
            });
            Ok(Box::new(client) as kdp_client::BoxStream)
        })
    }
}

fn tls_port(leaf: &Leaf) -> TlsPort {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = vec![CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    TlsPort(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

/// A PLAINTEXT client aimed at a TLS listener: the TLS alert is recognised
/// where a frame size was expected, and the bootstrap stops at once with the
/// hint instead of retrying until the timeout.
#[tokio::test(start_paused = true)]
async fn plaintext_to_a_tls_listener_fails_at_once_with_the_hint() {
    let pki = Pki::new("ca");
    let port = tls_port(&pki.leaf("broker", &["localhost"], false));
    let config = kdp_client::ClientConfig {
        connector: Arc::new(port),
        bootstrap_timeout: Duration::from_secs(30),
        ..Default::default()
    };
    let start = tokio::time::Instant::now();
    let e = kdp_client::Client::connect(vec![BrokerAddress::new("localhost", 9093)], config)
        .await
        .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let Error::Bootstrap { attempts } = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(attempts.as_slice(), [Error::TlsListener { .. }]),
        "{e}"
    );
    assert!(!e.is_retriable());
    assert!(
        e.to_string()
            .contains("this port speaks TLS: set security.protocol=SSL (or SASL_SSL)"),
        "{e}"
    );
}
