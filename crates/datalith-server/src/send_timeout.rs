//! A connection whose writes may wait at most `--send-timeout-ms` for the client. A client
//! that stops reading an answer fills its socket's buffers, and from then on each write of the
//! server waits; hyper waits with it, for ever, holding the connection's place and, for a
//! streamed answer (`http::stream`), the rest of the result. Here a write that has waited that
//! long without the client taking a byte fails with `TimedOut`, which ends the connection.
//!
//! Only waiting counts: a client that reads slowly but steadily (any byte taken restarts the
//! clock) keeps its connection, and an idle connection (nothing to write) is left to the
//! header timeout and keep-alive. Reads pass through untouched (the header and body timeouts
//! bound them).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// `S` with its writes bounded in time.
pub struct SendTimeout<S> {
    inner: S,
    patience: Duration,
    /// Started when a write first waits, dropped when a write goes through.
    waiting: Option<Pin<Box<Sleep>>>,
    /// Connections cut off, for `/metrics`.
    cut_off: Arc<AtomicU64>,
}

impl<S> SendTimeout<S> {
    /// `inner`, whose writes may wait at most `patience`; each cut-off adds one to `cut_off`.
    pub fn new(inner: S, patience: Duration, cut_off: Arc<AtomicU64>) -> SendTimeout<S> {
        SendTimeout {
            inner,
            patience,
            waiting: None,
            cut_off,
        }
    }

    /// What a write that returned `poll` means here: waiting past the patience is an error.
    fn watch<T>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.waiting = None;
            return poll;
        }
        let patience = self.patience;
        let clock = self
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(patience)));
        // Polling the clock registers this task to be woken when it runs out, so the write
        // is tried again (and refused) even if the socket never becomes writable.
        match clock.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                self.waiting = None;
                self.cut_off.fetch_add(1, Ordering::Relaxed);
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the client took none of the answer for {} ms (--send-timeout-ms)",
                        patience.as_millis()
                    ),
                )))
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SendTimeout<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(cx, poll)
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for SendTimeout<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Writes `total` bytes into a pipe of `capacity` bytes whose reader takes `read_each`
    /// bytes every `every` (none when `read_each` is 0); returns what the writer ended with.
    async fn write_through(
        capacity: usize,
        total: usize,
        read_each: usize,
        every: Duration,
        patience: Duration,
    ) -> (io::Result<()>, u64) {
        let (client, server) = tokio::io::duplex(capacity);
        let cut_off = Arc::new(AtomicU64::new(0));
        let mut server = SendTimeout::new(server, patience, cut_off.clone());
        let reader = tokio::spawn(async move {
            let mut client = client;
            let mut buf = vec![0u8; read_each.max(1)];
            if read_each == 0 {
                // Holds the connection open without reading.
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            loop {
                tokio::time::sleep(every).await;
                match client.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        });
        let written = server.write_all(&vec![7u8; total]).await;
        reader.abort();
        (written, cut_off.load(Ordering::Relaxed))
    }

    #[tokio::test(start_paused = true)]
    async fn writes_wait_at_most_the_patience_then_fail_while_a_steady_reader_is_kept() {
        let ms = Duration::from_millis;
        // (pipe bytes, bytes written, reader takes, every, patience, cut off?)
        let cases = [
            // Fits in the pipe: never waits.
            (1024, 512, 0, ms(10), ms(100), false),
            // A reader that never reads: the write waits out the patience.
            (1024, 4096, 0, ms(10), ms(100), true),
            // Slow but steady (a byte taken every 50 ms, patience 100 ms): kept.
            (64, 1024, 64, ms(50), ms(100), false),
            // Slower than the patience between reads: cut off.
            (64, 1024, 64, ms(250), ms(100), true),
        ];
        for (capacity, total, read_each, every, patience, cut) in cases {
            let (written, cut_off) =
                write_through(capacity, total, read_each, every, patience).await;
            let case = format!("{capacity} {total} {read_each} {every:?} {patience:?}");
            match cut {
                true => {
                    let e = written.expect_err(&case);
                    assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{case}");
                    assert!(e.to_string().contains("--send-timeout-ms"), "{case}: {e}");
                    assert_eq!(cut_off, 1, "{case}");
                }
                false => {
                    written.expect(&case);
                    assert_eq!(cut_off, 0, "{case}");
                }
            }
        }
    }
}
