//! The async frame loop (feature `tokio`), written once for every reader of
//! frames from a stream: the client's connection, the mock broker and the
//! test brokers.
//!
//! It hands whatever the buffered reader holds to a [`FrameReader`] and
//! takes from the buffer only the bytes the frame used, so pipelined frames
//! stay buffered for the next call. The size prefix is checked before any
//! buffer exists and the payload grows only with what arrived. Cancelling
//! the future loses nothing: every byte taken from the reader is already in
//! the [`FrameReader`], which keeps the frame's progress for the next call.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::reader::FrameReader;
use crate::error::DecodeError;

/// Why no frame was read. After any of these the stream is out of step and
/// should be dropped.
#[derive(Debug, thiserror::Error)]
pub enum ReadFrameError {
    /// The stream ended between frames: the peer closed cleanly.
    #[error("the connection was closed")]
    Closed,
    /// The stream ended inside a frame.
    #[error("the connection ended inside a frame ({received} bytes of {})", expected_text(*.expected))]
    Truncated {
        /// Bytes of the frame received, its size prefix included.
        received: usize,
        /// The frame's whole length (prefix included), if the prefix was complete.
        expected: Option<usize>,
    },
    /// The size prefix was refused (negative, above the maximum, below the
    /// minimum); nothing was allocated for it.
    #[error(transparent)]
    Refused(DecodeError),
    /// Reading failed.
    #[error(transparent)]
    Io(io::Error),
    /// Nothing arrived for this long ([`read_frame_idle`]).
    #[error("nothing arrived for {0:?}")]
    Idle(Duration),
}

fn expected_text(expected: Option<usize>) -> String {
    expected.map_or_else(|| "a size prefix".to_string(), |n| n.to_string())
}

/// Reads one frame's payload (the bytes after the size prefix).
pub async fn read_frame<R>(rd: &mut R, frames: &mut FrameReader) -> Result<Vec<u8>, ReadFrameError>
where
    R: AsyncBufRead + Unpin + ?Sized,
{
    read(rd, frames, None).await
}

/// [`read_frame`], failing with [`ReadFrameError::Idle`] when a single read
/// waits longer than `idle` (a peer that stops sending, before or inside a
/// frame; a slow peer that keeps sending is not cut).
pub async fn read_frame_idle<R>(
    rd: &mut R,
    frames: &mut FrameReader,
    idle: Duration,
) -> Result<Vec<u8>, ReadFrameError>
where
    R: AsyncBufRead + Unpin + ?Sized,
{
    read(rd, frames, Some(idle)).await
}

async fn read<R>(
    rd: &mut R,
    frames: &mut FrameReader,
    idle: Option<Duration>,
) -> Result<Vec<u8>, ReadFrameError>
where
    R: AsyncBufRead + Unpin + ?Sized,
{
    loop {
        let filled = match idle {
            None => rd.fill_buf().await,
            Some(d) => tokio::time::timeout(d, rd.fill_buf())
                .await
                .map_err(|_| ReadFrameError::Idle(d))?,
        };
        let input = filled.map_err(ReadFrameError::Io)?;
        if input.is_empty() {
            return Err(if frames.is_between_frames() {
                ReadFrameError::Closed
            } else {
                ReadFrameError::Truncated {
                    received: frames.received(),
                    expected: frames.expected(),
                }
            });
        }
        let mut rest = input;
        let frame = frames.feed(&mut rest);
        let used = input.len() - rest.len();
        rd.consume(used);
        if let Some(payload) = frame.map_err(ReadFrameError::Refused)? {
            return Ok(payload);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncWriteExt, BufReader};

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    async fn one(bytes: &[u8], max: usize) -> Result<Vec<u8>, ReadFrameError> {
        let mut rd = bytes;
        read_frame(&mut rd, &mut FrameReader::new(max)).await
    }

    #[tokio::test]
    async fn a_stream_ending_between_frames_is_a_clean_close() {
        let e = one(&[], 100).await.unwrap_err();
        assert!(matches!(e, ReadFrameError::Closed), "{e:?}");
        // and after a whole frame
        let stream = frame(b"ab");
        let mut rd = &stream[..];
        let mut frames = FrameReader::new(100);
        assert_eq!(read_frame(&mut rd, &mut frames).await.unwrap(), b"ab");
        let e = read_frame(&mut rd, &mut frames).await.unwrap_err();
        assert!(matches!(e, ReadFrameError::Closed), "{e:?}");
    }

    #[tokio::test]
    async fn a_stream_ending_inside_the_size_prefix_is_truncated() {
        let e = one(&[0, 0], 100).await.unwrap_err();
        assert!(
            matches!(
                e,
                ReadFrameError::Truncated {
                    received: 2,
                    expected: None
                }
            ),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn a_stream_ending_inside_the_payload_is_truncated() {
        let mut stream = frame(&[7; 10]);
        stream.truncate(9);
        let e = one(&stream, 100).await.unwrap_err();
        assert!(
            matches!(
                e,
                ReadFrameError::Truncated {
                    received: 9,
                    expected: Some(14)
                }
            ),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn an_oversize_prefix_is_refused_before_anything_is_allocated() {
        // announces 2 GiB, and some bytes follow
        let mut stream = i32::MAX.to_be_bytes().to_vec();
        stream.extend_from_slice(&[1; 64]);
        let mut rd = &stream[..];
        let mut frames = FrameReader::new(1024);
        let e = read_frame(&mut rd, &mut frames).await.unwrap_err();
        let ReadFrameError::Refused(e) = e else {
            panic!("{e:?}")
        };
        assert!(e.to_string().contains("above the maximum"), "{e}");
        assert_eq!(frames.buffer_capacity(), 0);
        // only the prefix was taken from the stream
        assert_eq!(rd.len(), 64);
    }

    #[tokio::test]
    async fn two_frames_in_one_read_come_out_one_at_a_time() {
        let mut stream = frame(b"first");
        stream.extend(frame(b""));
        stream.extend(frame(b"third"));
        let mut rd = &stream[..];
        let mut frames = FrameReader::new(100);
        assert_eq!(read_frame(&mut rd, &mut frames).await.unwrap(), b"first");
        // the rest stays in the reader's buffer
        assert_eq!(rd.len(), 4 + 4 + 5);
        assert_eq!(read_frame(&mut rd, &mut frames).await.unwrap(), b"");
        assert_eq!(read_frame(&mut rd, &mut frames).await.unwrap(), b"third");
        assert!(rd.is_empty());
    }

    #[tokio::test]
    async fn a_frame_delivered_a_byte_at_a_time_is_whole() {
        let payload: Vec<u8> = (0..=255).cycle().take(3000).collect();
        let stream = frame(&payload);
        let (mut tx, rx) = tokio::io::duplex(1);
        let writer = tokio::spawn(async move {
            for b in stream {
                tx.write_all(&[b]).await.unwrap();
            }
        });
        let mut rd = BufReader::with_capacity(1, rx);
        let mut frames = FrameReader::new(1 << 20);
        assert_eq!(read_frame(&mut rd, &mut frames).await.unwrap(), payload);
        writer.await.unwrap();
        let e = read_frame(&mut rd, &mut frames).await.unwrap_err();
        assert!(matches!(e, ReadFrameError::Closed), "{e:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_stops_sending_inside_a_frame_is_idle() {
        let (mut tx, rx) = tokio::io::duplex(64);
        tx.write_all(&[0, 0, 0, 9, 1]).await.unwrap();
        let mut rd = BufReader::new(rx);
        let mut frames = FrameReader::new(100);
        let start = tokio::time::Instant::now();
        let e = read_frame_idle(&mut rd, &mut frames, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(matches!(e, ReadFrameError::Idle(_)), "{e:?}");
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        // the progress is kept: the rest of the frame completes it
        tx.write_all(&[2; 8]).await.unwrap();
        let got = read_frame_idle(&mut rd, &mut frames, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(got, [1, 2, 2, 2, 2, 2, 2, 2, 2]);
    }
}
