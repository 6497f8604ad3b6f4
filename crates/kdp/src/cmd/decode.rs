//! `kdp decode`: wire bytes to JSON. DescribeProducers (the default) in the
//! seed's shape; with `--api NAME|KEY`, any message of kdp-wire's registry
//! in its JSON form. The input is a message body unless `--frame` is given.

use std::path::PathBuf;

use kdp_wire::frame::{decode_request_frame, decode_response_frame};
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kdp_wire::registry::{self, DeclaredApi};
use kdp_wire::{api, decode_exact, json};

use super::wire_io::{finish, malformed, read_input, write_json, write_with, Failure, FrameDoc};
use crate::exit;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  kdp decode vectors/seed-example.bin\n  \
xxd -p response.bin | kdp decode --hex\n  kdp decode --frame --request captured-request.bin\n  \
kdp decode --api ListOffsets --api-version 10 --frame captured-response.bin")]
pub struct DecodeArgs {
    /// The input is a request (default: a response).
    #[arg(long)]
    request: bool,
    /// The API, by Kafka name (any case) or key, e.g. `ListOffsets` or `2`
    /// (default: DescribeProducers). Any API kdp speaks.
    #[arg(long, value_name = "NAME|KEY")]
    api: Option<String>,
    /// The message's version. Needed for an API with several versions,
    /// except for a request frame, whose header says it.
    #[arg(long = "api-version", value_name = "N")]
    api_version: Option<i16>,
    /// The input is hex text (whitespace ignored) instead of raw bytes.
    #[arg(long)]
    hex: bool,
    /// The input is a whole frame: int32 size, header, body. Prints the header beside the body.
    #[arg(long)]
    frame: bool,
    /// Input file; `-` or nothing reads standard input.
    file: Option<PathBuf>,
}

/// `kdp decode`; returns the exit status.
pub fn run(args: DecodeArgs) -> i32 {
    finish(decode(&args))
}

fn decode(args: &DecodeArgs) -> Result<(), Failure> {
    let declared = match args.api.as_deref() {
        None => None,
        Some(name) => Some(find_api(name)?),
    };
    let raw = read_input(args.file.as_ref())?;
    let bytes = if args.hex {
        let text = std::str::from_utf8(&raw)
            .map_err(|e| malformed(format!("hex input is not text: {e}")))?;
        kdp_wire::hex::decode(text).map_err(malformed)?
    } else {
        raw
    };
    // DescribeProducers v0 keeps the seed's shape.
    if let Some(declared) = declared
        .filter(|a| a.key != api::DESCRIBE_PRODUCERS || args.api_version.is_some_and(|v| v != 0))
    {
        return write_json(&decode_declared(declared, args, &bytes)?);
    }
    if args.api_version.is_some_and(|v| v != 0) {
        return Err(Failure(
            exit::USAGE,
            "DescribeProducers has only version 0".into(),
        ));
    }
    match (args.request, args.frame) {
        (false, false) => {
            let m = decode_exact::<DescribeProducersResponse>(&bytes, 0).map_err(malformed)?;
            write_with(|out| json::write_response_pretty(out, &m))
        }
        (true, false) => {
            write_json(&decode_exact::<DescribeProducersRequest>(&bytes, 0).map_err(malformed)?)
        }
        (false, true) => {
            let (header, body) =
                decode_response_frame::<DescribeProducersResponse>(&bytes, 0).map_err(malformed)?;
            write_json(&FrameDoc {
                size: Some(bytes.len() - 4),
                header,
                body,
            })
        }
        (true, true) => {
            let (header, body) =
                decode_request_frame::<DescribeProducersRequest>(&bytes).map_err(malformed)?;
            write_json(&FrameDoc {
                size: Some(bytes.len() - 4),
                header,
                body,
            })
        }
    }
}

/// The registry's API a user names, or a usage error listing them.
fn find_api(name: &str) -> Result<&'static DeclaredApi, Failure> {
    registry::find(name).ok_or_else(|| {
        let known: Vec<String> = registry::DECLARED
            .iter()
            .map(|a| format!("{} ({})", a.name, a.key))
            .collect();
        Failure(
            exit::USAGE,
            format!(
                "--api {name:?} is not an API kdp speaks; it speaks {}",
                known.join(", ")
            ),
        )
    })
}

/// Any declared message as JSON: the body, or `{"Size", "Header", "Body"}`
/// for a frame.
fn decode_declared(
    declared: &DeclaredApi,
    args: &DecodeArgs,
    bytes: &[u8],
) -> Result<serde_json::Value, Failure> {
    let request_frame = args.request && args.frame;
    let version = match args.api_version {
        Some(v) if declared.versions().contains(&v) => v,
        Some(v) => {
            return Err(Failure(
                exit::USAGE,
                format!(
                    "{} has versions {}-{}, not {v}",
                    declared.name, declared.lowest_version, declared.highest_version
                ),
            ))
        }
        // The header says.
        None if request_frame => declared.lowest_version,
        None if declared.lowest_version == declared.highest_version => declared.lowest_version,
        None => {
            return Err(Failure(
                exit::USAGE,
                format!(
                    "{} has versions {}-{}: say which with --api-version",
                    declared.name, declared.lowest_version, declared.highest_version
                ),
            ))
        }
    };
    let frame = |(header, body)| {
        serde_json::to_value(FrameDoc {
            size: Some(bytes.len().saturating_sub(4)),
            header,
            body,
        })
        .map_err(malformed)
    };
    match (args.request, args.frame) {
        (false, false) => (declared.decode_response)(bytes, version).map_err(malformed),
        (true, false) => (declared.decode_request)(bytes, version).map_err(malformed),
        (false, true) => {
            frame((declared.decode_response_frame)(bytes, version).map_err(malformed)?)
        }
        (true, true) => frame((declared.decode_request_frame)(bytes, version).map_err(malformed)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use kdp_server::broker::{handle_request, Advertised, Shared};
    use kdp_server::{AllowAll, Cluster};
    use kdp_wire::frame::request_frame_to_vec;
    use kdp_wire::RequestHeader;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: DecodeArgs,
    }

    fn args(argv: &[&str]) -> DecodeArgs {
        Cli::try_parse_from(std::iter::once("decode").chain(argv.iter().copied()))
            .unwrap()
            .args
    }

    fn ok<T>(r: Result<T, Failure>) -> T {
        match r {
            Ok(v) => v,
            Err(Failure(code, message)) => panic!("exit {code}: {message}"),
        }
    }

    fn mock() -> Shared {
        let cluster = Cluster::from_json(
            r#"{"brokers": [{"id": 1}],
                "topics": [{"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]},
                           {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}]}"#,
        )
        .unwrap();
        let advertised = vec![Advertised {
            id: 1,
            host: "127.0.0.1".into(),
            port: 9092,
        }];
        Shared::new(
            cluster,
            advertised,
            std::sync::Arc::new(AllowAll),
            usize::MAX,
        )
    }

    /// A default request of every declared API at every version, answered
    /// by the mock: the captured request and response frames.
    macro_rules! captures {
        ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
            fn captures(shared: &Shared) -> Vec<(&'static str, i16, Vec<u8>, Vec<u8>)> {
                use kdp_wire::Message;
                let mut out = Vec::new();
                $({
                    type R = kdp_wire::messages::$req;
                    for version in R::LOWEST_VERSION..=R::HIGHEST_VERSION {
                        let header = RequestHeader {
                            request_api_key: R::API_KEY,
                            request_api_version: version,
                            correlation_id: 3,
                            client_id: Some("kdp-test".into()),
                            ..Default::default()
                        };
                        let request = request_frame_to_vec(&header, &R::default());
                        let response = handle_request(shared, 1, &request[4..], None)
                            .unwrap_or_else(|e| panic!("{} v{version}: {e}", stringify!($name)))
                            .response;
                        out.push((stringify!($name), version, request, response));
                    }
                })*
                out
            }
        };
    }

    kdp_wire::for_each_api!(captures);

    #[test]
    fn every_declared_api_decodes_from_a_capture_of_the_mock() {
        let shared = mock();
        let captured = captures(&shared);
        let versions: usize = registry::DECLARED
            .iter()
            .map(|a| a.versions().count())
            .sum();
        assert_eq!(captured.len(), versions);
        for (name, version, request, response) in captured {
            let v = version.to_string();
            let key = registry::find(name).unwrap().key.to_string();
            // By name for the response, by key for the request.
            let declared = ok(find_api(name));
            let doc = decode_declared(
                declared,
                &args(&["--api", name, "--api-version", &v, "--frame"]),
                &response,
            )
            .unwrap_or_else(|e| panic!("{name} v{version} response: {}", e.1));
            assert_eq!(doc["Header"]["CorrelationId"], 3, "{name} v{version}");
            assert_eq!(doc["Size"], response.len() - 4);
            // The body alone decodes to the same.
            let header_len = kdp_wire::ResponseHeader::default()
                .encoded_len(api::response_header_version(declared.key, version));
            let body = decode_declared(
                declared,
                &args(&["--api", name, "--api-version", &v]),
                &response[4 + header_len..],
            );
            let body = ok(body);
            assert_eq!(body, doc["Body"], "{name} v{version}");
            let doc = decode_declared(
                ok(find_api(&key)),
                &args(&["--api", &key, "--request", "--frame"]),
                &request,
            )
            .unwrap_or_else(|e| panic!("{name} v{version} request: {}", e.1));
            assert_eq!(doc["Header"]["RequestApiVersion"], version);
        }
    }

    #[test]
    fn unknown_apis_and_versions_are_usage_errors() {
        let e = find_api("Produce").unwrap_err();
        assert_eq!(e.0, exit::USAGE);
        assert!(e.1.contains("DescribeProducers (61)"), "{}", e.1);
        let lo = ok(find_api("ListOffsets"));
        let e = decode_declared(lo, &args(&["--api", "ListOffsets"]), &[]).unwrap_err();
        assert_eq!(e.0, exit::USAGE);
        assert!(e.1.contains("--api-version"), "{}", e.1);
        let e =
            decode_declared(lo, &args(&["--api", "2", "--api-version", "11"]), &[]).unwrap_err();
        assert_eq!(
            (e.0, e.1.as_str()),
            (exit::USAGE, "ListOffsets has versions 1-10, not 11")
        );
        // Garbage is malformed input, not a panic.
        let e = decode_declared(lo, &args(&["--api-version", "3"]), &[1, 2, 3]).unwrap_err();
        assert_eq!(e.0, exit::PARTIAL);
    }
}
