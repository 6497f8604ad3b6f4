//! `kdp decode` and `kdp encode`: wire bytes to JSON in the seed's shape and
//! back. The input is a message body unless `--frame` is given.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;

use kdp_wire::frame::{decode_request_frame, decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kdp_wire::{api, decode_exact, encode_to_vec, json, Message, RequestHeader, ResponseHeader};
use serde::{Deserialize, Serialize};

use crate::exit;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  kdp decode vectors/seed-example.bin\n  \
xxd -p response.bin | kdp decode --hex\n  kdp decode --frame --request captured-request.bin")]
pub struct DecodeArgs {
    /// The input is a DescribeProducers request (default: a response).
    #[arg(long)]
    request: bool,
    /// The input is hex text (whitespace ignored) instead of raw bytes.
    #[arg(long)]
    hex: bool,
    /// The input is a whole frame: int32 size, header, body. Prints the header beside the body.
    #[arg(long)]
    frame: bool,
    /// Input file; `-` or nothing reads standard input.
    file: Option<PathBuf>,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  kdp encode vectors/seed-example.json > seed.bin\n  \
kdp encode --request --frame --correlation-id 7 --client-id ops request.json | xxd"
)]
pub struct EncodeArgs {
    /// The input is a DescribeProducers request (default: a response).
    #[arg(long)]
    request: bool,
    /// Write hex text instead of raw bytes.
    #[arg(long)]
    hex: bool,
    /// Write a whole frame: int32 size, header, body. The input may also be
    /// the `{"Header": ..., "Body": ...}` document that `decode --frame` prints.
    #[arg(long)]
    frame: bool,
    /// The frame header's correlation id (with --frame).
    #[arg(long, requires = "frame", allow_negative_numbers = true)]
    correlation_id: Option<i32>,
    /// The request header's client id (with --frame --request).
    #[arg(long, requires = "frame")]
    client_id: Option<String>,
    /// Input file; `-` or nothing reads standard input.
    file: Option<PathBuf>,
}

/// The JSON form of a whole frame.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrameDoc<H, B> {
    #[serde(rename = "Size", default, skip_serializing_if = "Option::is_none")]
    size: Option<usize>,
    #[serde(rename = "Header")]
    header: H,
    #[serde(rename = "Body")]
    body: B,
}

/// A failure, already worded for the user, with its exit status.
struct Failure(i32, String);

fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    let result = match file {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::File::open(p).and_then(|mut f| f.read_to_end(&mut buf))
        }
        _ => io::stdin().lock().read_to_end(&mut buf),
    };
    let name = file.map_or_else(|| "standard input".to_string(), |p| p.display().to_string());
    result.map_err(|e| Failure(exit::USAGE, format!("cannot read {name}: {e}")))?;
    Ok(buf)
}

fn finish(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => exit::OK,
        Err(Failure(code, msg)) => {
            eprintln!("kdp: {msg}");
            code
        }
    }
}

fn malformed(e: impl std::fmt::Display) -> Failure {
    Failure(exit::PARTIAL, format!("malformed input: {e}"))
}

fn write_out(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure(exit::PARTIAL, format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

fn write_json<T: Serialize>(value: &T) -> Result<(), Failure> {
    write_with(|out| serde_json::to_writer_pretty(out, value).map_err(io::Error::from))
}

/// Runs a JSON writer on buffered stdout, adds the final newline, and treats
/// a closed pipe (`| head`) as success.
fn write_with(
    f: impl FnOnce(&mut BufWriter<io::StdoutLock<'static>>) -> io::Result<()>,
) -> Result<(), Failure> {
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let result = f(&mut out)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match result {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure(exit::PARTIAL, format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

pub fn run_decode(args: DecodeArgs) -> i32 {
    finish(decode(&args))
}

fn decode(args: &DecodeArgs) -> Result<(), Failure> {
    let raw = read_input(args.file.as_ref())?;
    let bytes = if args.hex {
        let text = std::str::from_utf8(&raw)
            .map_err(|e| malformed(format!("hex input is not text: {e}")))?;
        kdp_wire::hex::decode(text).map_err(malformed)?
    } else {
        raw
    };
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

pub fn run_encode(args: EncodeArgs) -> i32 {
    finish(encode(&args))
}

fn encode(args: &EncodeArgs) -> Result<(), Failure> {
    let raw = read_input(args.file.as_ref())?;
    let text = std::str::from_utf8(&raw)
        .map_err(|e| malformed(format!("input is not UTF-8 text: {e}")))?;
    if let Some(id) = &args.client_id {
        if id.len() > i16::MAX as usize {
            return Err(Failure(
                exit::USAGE,
                "--client-id is longer than 32767 bytes".into(),
            ));
        }
    }
    let bytes = match (args.request, args.frame) {
        (false, false) => encode_to_vec(&parse::<DescribeProducersResponse>(text)?, 0),
        (true, false) => encode_to_vec(&parse::<DescribeProducersRequest>(text)?, 0),
        (false, true) => {
            let (header, body) = parse_frame::<ResponseHeader, DescribeProducersResponse>(text)?;
            let correlation_id = args
                .correlation_id
                .or(header.map(|h| h.correlation_id))
                .ok_or_else(missing_correlation_id)?;
            kdp_wire::frame::response_frame_to_vec(correlation_id, &body, 0)
        }
        (true, true) => {
            let (header, body) = parse_frame::<RequestHeader, DescribeProducersRequest>(text)?;
            let mut header = match header {
                Some(h) => h,
                None => RequestHeader {
                    request_api_key: api::DESCRIBE_PRODUCERS,
                    request_api_version: 0,
                    correlation_id: args.correlation_id.ok_or_else(missing_correlation_id)?,
                    ..Default::default()
                },
            };
            if header.request_api_key != DescribeProducersRequest::API_KEY
                || header.request_api_version != 0
            {
                return Err(malformed(
                    "Header: only DescribeProducers (key 61) version 0 is supported",
                ));
            }
            if let Some(id) = args.correlation_id {
                header.correlation_id = id;
            }
            if args.client_id.is_some() {
                header.client_id.clone_from(&args.client_id);
            }
            request_frame_to_vec(&header, &body)
        }
    };
    if args.hex {
        let mut text = kdp_wire::hex::encode(&bytes);
        text.push('\n');
        write_out(text.as_bytes())
    } else {
        write_out(&bytes)
    }
}

fn missing_correlation_id() -> Failure {
    Failure(
        exit::USAGE,
        "--frame needs --correlation-id N (or a Header in the input)".into(),
    )
}

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Failure> {
    json::from_str(text).map_err(malformed)
}

/// Either a bare body, or a `{"Header", "Body"}` frame document.
fn parse_frame<H, B>(text: &str) -> Result<(Option<H>, B), Failure>
where
    H: serde::de::DeserializeOwned,
    B: serde::de::DeserializeOwned,
{
    let is_frame_doc = serde_json::from_str::<serde_json::Value>(text)
        .map(|v| v.get("Body").is_some())
        .unwrap_or(false);
    if is_frame_doc {
        let doc: FrameDoc<H, B> = parse(text)?;
        Ok((Some(doc.header), doc.body))
    } else {
        Ok((None, parse(text)?))
    }
}
