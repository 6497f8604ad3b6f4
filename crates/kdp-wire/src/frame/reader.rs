//! A sans-IO reader of size-prefixed frames.
//!
//! The caller owns the socket: it hands over whatever bytes arrived and gets
//! back complete frame payloads. The size prefix is checked (not negative, not
//! above the maximum, not below the minimum) before any buffer exists, and the
//! payload buffer grows with the bytes that arrive, never with what the prefix
//! announces: a peer announcing 2 GiB and sending four bytes costs nothing.

use crate::error::{DecodeError, DecodeErrorKind};

use super::size::frame_size;

/// Splits a byte stream into frame payloads (the bytes after the size prefix).
///
/// ```
/// use kdp_wire::frame::FrameReader;
///
/// let mut reader = FrameReader::new(1024);
/// let mut input: &[u8] = &[0, 0, 0, 2, 0xAB, 0xCD, 0, 0];
/// assert_eq!(reader.feed(&mut input).unwrap(), Some(vec![0xAB, 0xCD]));
/// // the rest belongs to the next frame and was left in `input`
/// assert_eq!(input, &[0, 0]);
/// ```
#[derive(Debug)]
pub struct FrameReader {
    max_size: usize,
    min_size: usize,
    prefix: [u8; 4],
    prefix_len: usize,
    /// The announced payload size, once the prefix is complete and checked.
    size: Option<usize>,
    payload: Vec<u8>,
}

impl FrameReader {
    /// A reader refusing frames whose size prefix is above `max_size`.
    pub fn new(max_size: usize) -> Self {
        FrameReader {
            max_size,
            min_size: 0,
            prefix: [0; 4],
            prefix_len: 0,
            size: None,
            payload: Vec::new(),
        }
    }

    /// Also refuses frames smaller than `min_size` (e.g. 4 for a response
    /// that must hold a correlation id).
    pub fn with_min_size(mut self, min_size: usize) -> Self {
        self.min_size = min_size;
        self
    }

    /// Takes bytes from the front of `input` up to the end of the current
    /// frame and returns its payload once complete. Bytes after the frame are
    /// left in `input` for the next call. After an error the stream is out of
    /// step and should be dropped.
    pub fn feed(&mut self, input: &mut &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        let size = match self.size {
            Some(s) => s,
            None => {
                let take = (4 - self.prefix_len).min(input.len());
                let (head, rest) = input.split_at(take);
                self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(head);
                self.prefix_len += take;
                *input = rest;
                if self.prefix_len < 4 {
                    return Ok(None);
                }
                let size = frame_size(self.prefix, self.max_size)?;
                if size < self.min_size {
                    return Err(DecodeError::new(
                        0,
                        DecodeErrorKind::InvalidFrameSize {
                            size: size as i64,
                            reason: "below the minimum frame size",
                        },
                    )
                    .in_field("Size"));
                }
                self.size = Some(size);
                size
            }
        };
        let take = (size - self.payload.len()).min(input.len());
        let (head, rest) = input.split_at(take);
        self.grow(take, size);
        self.payload.extend_from_slice(head);
        *input = rest;
        if self.payload.len() < size {
            return Ok(None);
        }
        self.prefix_len = 0;
        self.size = None;
        Ok(Some(std::mem::take(&mut self.payload)))
    }

    /// Makes room for `more` bytes: doubling what has arrived (so feeding a
    /// byte at a time stays linear), never past the announced `size`.
    fn grow(&mut self, more: usize, size: usize) {
        let len = self.payload.len();
        let cap = self.payload.capacity();
        if len + more <= cap {
            return;
        }
        let target = (len + more).max(2 * cap).min(size);
        self.payload.reserve_exact(target - len);
    }

    /// How many more bytes the current frame needs (the rest of the prefix
    /// while it is incomplete). A caller may read at most this much to never
    /// read past a frame.
    pub fn wants(&self) -> usize {
        match self.size {
            Some(size) => size - self.payload.len(),
            None => 4 - self.prefix_len,
        }
    }

    /// True between frames: no byte of a next frame has arrived. The end of
    /// the stream is clean only here.
    pub fn is_between_frames(&self) -> bool {
        self.prefix_len == 0
    }

    /// Bytes of the current frame received so far, prefix included.
    pub fn received(&self) -> usize {
        self.prefix_len + self.payload.len()
    }

    /// The current frame's whole length, prefix included, once the prefix
    /// has been read.
    pub fn expected(&self) -> Option<usize> {
        self.size.map(|s| s + 4)
    }

    /// Bytes reserved for the current payload; bounded by what has arrived.
    pub fn buffer_capacity(&self) -> usize {
        self.payload.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    /// Two frames back to back, cut at every position into two feeds.
    #[test]
    fn every_split_point_yields_the_same_frames() {
        let a: Vec<u8> = (0..37).collect();
        let b: Vec<u8> = vec![9; 5];
        let mut stream = frame(&a);
        stream.extend(frame(&b));
        stream.extend(frame(&[]));
        for cut in 0..=stream.len() {
            let mut r = FrameReader::new(1024);
            let mut got = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                let mut input = part;
                while !input.is_empty() {
                    if let Some(f) = r.feed(&mut input).unwrap() {
                        got.push(f);
                    }
                }
            }
            assert_eq!(got, vec![a.clone(), b.clone(), vec![]], "cut at {cut}");
            assert!(r.is_between_frames());
        }
    }

    #[test]
    fn byte_at_a_time() {
        let payload: Vec<u8> = (0..=255).cycle().take(3000).collect();
        let stream = frame(&payload);
        let mut r = FrameReader::new(1 << 20);
        let mut got = None;
        for (i, b) in stream.iter().enumerate() {
            assert!(got.is_none(), "frame ended early at byte {i}");
            assert_eq!(r.received(), i);
            assert_eq!(r.wants(), if i < 4 { 4 - i } else { stream.len() - i });
            let mut input: &[u8] = std::slice::from_ref(b);
            got = r.feed(&mut input).unwrap();
            assert!(input.is_empty());
            // the buffer never runs ahead of the bytes by more than doubling
            assert!(r.buffer_capacity() <= 2 * (i + 1), "byte {i}");
        }
        assert_eq!(got, Some(payload));
    }

    #[test]
    fn size_above_the_maximum_is_refused() {
        let mut r = FrameReader::new(100);
        let mut input: &[u8] = &101i32.to_be_bytes();
        let e = r.feed(&mut input).unwrap_err();
        assert_eq!(e.path(), "Size");
        assert!(
            e.to_string().contains("above the maximum frame size"),
            "{e}"
        );
        assert_eq!(r.buffer_capacity(), 0);
        // exactly the maximum is fine
        let mut r = FrameReader::new(100);
        let mut input: &[u8] = &100i32.to_be_bytes();
        assert_eq!(r.feed(&mut input).unwrap(), None);
        assert_eq!(r.wants(), 100);
    }

    #[test]
    fn negative_size_is_refused() {
        let mut r = FrameReader::new(usize::MAX);
        let mut input: &[u8] = &(-1i32).to_be_bytes();
        let e = r.feed(&mut input).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
    }

    #[test]
    fn size_below_the_minimum_is_refused() {
        let mut r = FrameReader::new(100).with_min_size(4);
        let mut input: &[u8] = &[0, 0, 0, 3, 1, 2, 3];
        let e = r.feed(&mut input).unwrap_err();
        assert!(e.to_string().contains("below the minimum"), "{e}");
    }

    #[test]
    fn an_announced_2_gib_frame_reserves_only_what_arrived() {
        let mut r = FrameReader::new(usize::MAX);
        let mut input: &[u8] = &i32::MAX.to_be_bytes();
        assert_eq!(r.feed(&mut input).unwrap(), None);
        assert_eq!(r.expected(), Some(i32::MAX as usize + 4));
        assert_eq!(r.buffer_capacity(), 0);
        let chunk = [7u8; 1000];
        let mut input: &[u8] = &chunk;
        assert_eq!(r.feed(&mut input).unwrap(), None);
        assert!(r.buffer_capacity() < 4096, "{}", r.buffer_capacity());
        assert_eq!(r.received(), 1004);
        assert!(!r.is_between_frames());
    }
}
