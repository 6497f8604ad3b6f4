//! What `kdp decode` and `kdp encode` share: reading the input, writing to
//! stdout (a closed pipe is success), the frame document, and failures worded
//! for the user.

use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::exit;

/// The JSON form of a whole frame.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrameDoc<H, B> {
    #[serde(rename = "Size", default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    #[serde(rename = "Header")]
    pub header: H,
    #[serde(rename = "Body")]
    pub body: B,
}

/// A failure, already worded for the user, with its exit status.
pub(crate) struct Failure(pub i32, pub String);

pub(crate) fn read_input(file: Option<&PathBuf>) -> Result<Vec<u8>, Failure> {
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

pub(crate) fn finish(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => exit::OK,
        Err(Failure(code, msg)) => {
            fail!("{msg}");
            code
        }
    }
}

pub(crate) fn malformed(e: impl std::fmt::Display) -> Failure {
    Failure(exit::PARTIAL, format!("malformed input: {e}"))
}

pub(crate) fn write_out(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure(exit::PARTIAL, format!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

pub(crate) fn write_json<T: Serialize>(value: &T) -> Result<(), Failure> {
    write_with(|out| serde_json::to_writer_pretty(out, value).map_err(io::Error::from))
}

/// Runs a JSON writer on buffered stdout, adds the final newline, and treats
/// a closed pipe (`| head`) as success.
pub(crate) fn write_with(
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
