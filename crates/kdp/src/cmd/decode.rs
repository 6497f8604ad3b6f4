//! `kdp decode`: DescribeProducers wire bytes to JSON in the seed's shape. The
//! input is a message body unless `--frame` is given.

use std::path::PathBuf;

use kdp_wire::frame::{decode_request_frame, decode_response_frame};
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse};
use kdp_wire::{decode_exact, json};

use super::wire_io::{finish, malformed, read_input, write_json, write_with, Failure, FrameDoc};

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

/// `kdp decode`; returns the exit status.
pub fn run(args: DecodeArgs) -> i32 {
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
