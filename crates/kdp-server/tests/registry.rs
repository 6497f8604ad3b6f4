//! Every API of kdp-wire's registry is served by the mock: its ApiVersions
//! answer is the registry, API for API and version for version, and a
//! request of each API at each version, over TCP, gets its answer. A new
//! API in the registry is checked here without a line of its own.

#[path = "support/wire.rs"]
mod wire;
use wire::read_frame;

use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kdp_wire::registry::DECLARED;
use kdp_wire::ErrorCode;
use kdp_wire::{Message, Request, RequestHeader};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

async fn ask<R: Request + Default>(s: &mut TcpStream, req: &R, version: i16) -> R::Response {
    let header = RequestHeader {
        request_api_key: R::API_KEY,
        request_api_version: version,
        correlation_id: i32::from(version),
        client_id: Some("kdp-test".into()),
        ..Default::default()
    };
    s.write_all(&request_frame_to_vec(&header, req))
        .await
        .unwrap();
    let bytes = read_frame(s).await;
    let (h, body) = decode_response_frame::<R::Response>(&bytes, version)
        .unwrap_or_else(|e| panic!("{} v{version}: {e}", R::NAME));
    assert_eq!(
        h.correlation_id,
        i32::from(version),
        "{} v{version}",
        R::NAME
    );
    body
}

/// Every declared API, every version: a default request is answered.
macro_rules! every_api {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        async fn ask_every_api(s: &mut TcpStream) -> Vec<(&'static str, i16)> {
            let mut answered = Vec::new();
            $({
                type R = kdp_wire::messages::$req;
                for version in R::LOWEST_VERSION..=R::HIGHEST_VERSION {
                    let _: kdp_wire::messages::$resp = ask(s, &R::default(), version).await;
                    answered.push((stringify!($name), version));
                }
            })*
            answered
        }
    };
}

kdp_wire::for_each_api!(every_api);

#[tokio::test]
async fn the_mock_serves_exactly_the_registry() {
    let mock = MockCluster::start(
        Cluster::from_json(include_str!("data/cluster.json")).unwrap(),
        MockConfig {
            port: 0,
            idle_timeout: Duration::from_secs(60),
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    let mut s = TcpStream::connect(mock.listeners()[0].local_addr)
        .await
        .unwrap();
    let versions = ApiVersionsRequest {
        client_software_name: "kdp-test".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let advertised: ApiVersionsResponse = ask(&mut s, &versions, 3).await;
    assert_eq!(advertised.error_code, ErrorCode::NONE);
    let got: Vec<(i16, i16, i16)> = advertised
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect();
    let declared: Vec<(i16, i16, i16)> = DECLARED
        .iter()
        .map(|a| (a.key, a.lowest_version, a.highest_version))
        .collect();
    assert_eq!(got, declared);

    let answered = ask_every_api(&mut s).await;
    let expected: Vec<(&str, i16)> = DECLARED
        .iter()
        .flat_map(|a| a.versions().map(move |v| (a.name, v)))
        .collect();
    assert_eq!(answered, expected);
    mock.shutdown().await;
}
