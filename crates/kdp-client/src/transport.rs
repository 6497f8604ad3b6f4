//! Byte streams to brokers, and how they are opened.
//!
//! A [`Connection`](crate::Connection) runs over any `AsyncRead + AsyncWrite`
//! stream. [`Connector`] opens one for a `host:port`; [`TcpConnector`] is
//! PLAINTEXT. TLS fits as another connector that wraps the TCP stream it
//! opens (the result is still a [`BoxStream`]); SASL fits as a step run on the
//! [`Connection`](crate::Connection) after ApiVersions, before it is handed out.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::error::{Error, Result};

/// A byte stream a connection can run over.
pub trait AsyncStream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> AsyncStream for T {}

/// A type-erased stream (TCP today, TLS over TCP later).
pub type BoxStream = Box<dyn AsyncStream>;

/// The future a [`Connector`] returns.
pub type ConnectFuture<'a> = Pin<Box<dyn Future<Output = Result<BoxStream>> + Send + 'a>>;

/// Opens byte streams to brokers. The caller bounds the time it may take.
pub trait Connector: Send + Sync + 'static {
    /// Opens a stream to `addr`.
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a>;
}

/// PLAINTEXT: TCP with Nagle off, trying every address the name resolves to
/// in turn (like Kafka's `client.dns.lookup=use_all_dns_ips`).
#[derive(Debug, Default, Clone, Copy)]
pub struct TcpConnector;

impl Connector for TcpConnector {
    fn connect<'a>(&'a self, addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(async move {
            let stream = connect_tcp(addr).await?;
            Ok(Box::new(stream) as BoxStream)
        })
    }
}

/// Resolves `addr` and connects to the first resolved address that accepts.
pub async fn connect_tcp(addr: &BrokerAddress) -> Result<TcpStream> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((addr.host.as_str(), addr.port))
        .await
        .map_err(|e| Error::Resolve {
            addr: addr.to_string(),
            source: Arc::new(e),
        })?
        .collect();
    if resolved.is_empty() {
        return Err(Error::Resolve {
            addr: addr.to_string(),
            source: Arc::new(io::Error::new(
                io::ErrorKind::NotFound,
                "the name resolved to no address",
            )),
        });
    }
    let mut last = None;
    for sa in resolved {
        match TcpStream::connect(sa).await {
            Ok(s) => {
                // Small request/response frames: never wait for more data.
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => {
                tracing::debug!(%addr, %sa, error = %e, "connect failed");
                last = Some(e);
            }
        }
    }
    Err(Error::Connect {
        addr: addr.to_string(),
        source: Arc::new(last.unwrap_or_else(|| io::Error::other("no address"))),
    })
}

/// A broker's `host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerAddress {
    /// A host name or IP address.
    pub host: String,
    /// The TCP port.
    pub port: u16,
}

impl BrokerAddress {
    /// The address `host:port`.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        BrokerAddress {
            host: host.into(),
            port,
        }
    }

    /// Parses `host:port`, `1.2.3.4:9092` or `[::1]:9092`.
    pub fn parse(s: &str) -> Result<Self> {
        Self::parse_port_from(s, 1)
    }

    /// [`BrokerAddress::parse`] for a listening address, where port 0 means any free port.
    pub fn parse_listen(s: &str) -> Result<Self> {
        Self::parse_port_from(s, 0)
    }

    fn parse_port_from(s: &str, min_port: u16) -> Result<Self> {
        let bad = |reason| Error::InvalidAddress {
            addr: s.to_string(),
            reason,
        };
        let s = s.trim();
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (host, after) = rest
                .split_once(']')
                .ok_or_else(|| bad("missing ']' after an IPv6 address"))?;
            let port = after
                .strip_prefix(':')
                .ok_or_else(|| bad("expected HOST:PORT"))?;
            (host, port)
        } else {
            s.rsplit_once(':')
                .ok_or_else(|| bad("expected HOST:PORT"))?
        };
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        if !s.starts_with('[') && host.contains(':') {
            return Err(bad("write IPv6 addresses as [ADDR]:PORT"));
        }
        let range = if min_port == 0 {
            "the port is not a number from 0 to 65535"
        } else {
            "the port is not a number from 1 to 65535"
        };
        let port: u16 = port.parse().map_err(|_| bad(range))?;
        if port < min_port {
            return Err(bad(range));
        }
        Ok(BrokerAddress::new(host, port))
    }

    /// Parses a comma-separated list, as Kafka's `bootstrap.servers`.
    pub fn parse_list(s: &str) -> Result<Vec<Self>> {
        let list: Vec<Self> = s
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Self::parse)
            .collect::<Result<_>>()?;
        if list.is_empty() {
            return Err(Error::InvalidAddress {
                addr: s.to_string(),
                reason: "no HOST:PORT given",
            });
        }
        Ok(list)
    }
}

impl fmt::Display for BrokerAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        assert_eq!(
            BrokerAddress::parse("localhost:9092").unwrap(),
            BrokerAddress::new("localhost", 9092)
        );
        assert_eq!(
            BrokerAddress::parse("[::1]:9093").unwrap(),
            BrokerAddress::new("::1", 9093)
        );
        assert_eq!(BrokerAddress::new("::1", 9093).to_string(), "[::1]:9093");
        for bad in [
            "localhost",
            ":9092",
            "h:0",
            "h:65536",
            "h:x",
            "::1:9092",
            "[::1]9092",
        ] {
            assert!(BrokerAddress::parse(bad).is_err(), "{bad}");
        }
        let any = BrokerAddress::parse_listen("[::]:0").unwrap();
        assert_eq!(any, BrokerAddress::new("::", 0));
        assert_eq!(
            BrokerAddress::parse_listen("127.0.0.1:0").unwrap(),
            BrokerAddress::new("127.0.0.1", 0)
        );
        for bad in ["::1:9092", "localhost", ":9092", "h:99999"] {
            assert!(BrokerAddress::parse_listen(bad).is_err(), "{bad}");
        }
        let list = BrokerAddress::parse_list("a:1, b:2,").unwrap();
        assert_eq!(list.len(), 2);
        assert!(BrokerAddress::parse_list(" , ").is_err());
    }
}
