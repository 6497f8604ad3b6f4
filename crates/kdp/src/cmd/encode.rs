//! `kdp encode`: JSON in the seed's shape to DescribeProducers wire bytes, a
//! body or (`--frame`) a whole frame.

use std::path::PathBuf;

use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kdp_wire::{api, encode_to_vec, json, Message, RequestHeader, ResponseHeader};

use super::wire_io::{finish, malformed, read_input, write_out, Failure, FrameDoc};
use crate::exit;

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

/// `kdp encode`; returns the exit status.
pub fn run(args: EncodeArgs) -> i32 {
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
