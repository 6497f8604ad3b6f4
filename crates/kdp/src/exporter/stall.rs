//! A connection's stream that records when it last moved bytes and fails a
//! write that makes no progress for too long: a client that pipelines
//! requests and never reads its answers fills the socket buffers, and
//! without this would hold its connection slot forever.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// When a connection last moved bytes, in ms since `base` (the server's
/// start), so the least recently active connection can be found.
#[derive(Debug)]
pub struct Progress {
    base: Instant,
    last_ms: AtomicU64,
}

impl Progress {
    /// A connection that moves its first bytes now.
    pub fn new(base: Instant) -> Arc<Progress> {
        let p = Arc::new(Progress {
            base,
            last_ms: AtomicU64::new(0),
        });
        p.touch();
        p
    }

    /// Records progress now.
    pub fn touch(&self) {
        let ms = u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Ms since the base of the last progress.
    pub fn last_ms(&self) -> u64 {
        self.last_ms.load(Ordering::Relaxed)
    }
}

/// `inner` with its progress recorded and its writes bounded.
pub struct Watched<S> {
    inner: S,
    progress: Arc<Progress>,
    write_timeout: Duration,
    /// Armed while a write (or flush) waits; disarmed by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> Watched<S> {
    pub fn new(inner: S, progress: Arc<Progress>, write_timeout: Duration) -> Watched<S> {
        Watched {
            inner,
            progress,
            write_timeout,
            stalled: None,
        }
    }

    /// A write that could not proceed: time out once it has waited too long.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let timeout = self.write_timeout;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the answer for too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progressed(&mut self) {
        self.stalled = None;
        self.progress.touch();
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.progress.touch();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, buf) {
            Poll::Pending => this.waiting(cx),
            Poll::Ready(Ok(n)) => {
                this.progressed();
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // a flush that returns says nothing of the peer reading: only
        // written bytes disarm the timer
        match Pin::new(&mut this.inner).poll_flush(cx) {
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_shutdown(cx) {
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_write_the_peer_never_reads_times_out() {
        // the peer's end is kept open and never read
        let (ours, _theirs) = tokio::io::duplex(64);
        let base = Instant::now();
        let progress = Progress::new(base);
        let mut w = Watched::new(ours, progress.clone(), Duration::from_secs(10));
        let started = Instant::now();
        let err = w.write_all(&[7u8; 4096]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        // on the paused clock: exactly the timeout after the last progress
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert_eq!(progress.last_ms(), 0, "the first 64 bytes went at once");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_that_keeps_reading_is_not_cut() {
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut w = Watched::new(ours, Progress::new(Instant::now()), Duration::from_secs(10));
        let reader = tokio::spawn(async move {
            let mut got = 0;
            let mut buf = [0u8; 32];
            while got < 4096 {
                // each read well within the timeout, all of them well past it
                tokio::time::sleep(Duration::from_secs(5)).await;
                got += theirs.read(&mut buf).await.unwrap();
            }
            got
        });
        w.write_all(&[1u8; 4096]).await.unwrap();
        drop(w);
        assert!(reader.await.unwrap() >= 4096);
    }
}
