//! JSON documents, pretty-printed, one per command run.

use std::io::{self, Write};

use kdp_wire::messages::DescribeProducersResponse;

/// A DescribeProducers response in the seed's shape (kdp-wire's fast writer,
/// readable back by `kdp encode`), then a newline.
pub fn write_describe_producers(
    mut out: &mut dyn Write,
    doc: &DescribeProducersResponse,
) -> io::Result<()> {
    kdp_wire::json::write_response_pretty(&mut out, doc)?;
    out.write_all(b"\n")
}
