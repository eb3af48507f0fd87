//! A response-write timeout for client connections. hyper pulls a response
//! body only as fast as the socket takes it, so a client that stops reading
//! leaves the connection (and the body, with whatever it holds: a tunnel
//! ticket, a platform slot, a merge's ffmpeg) waiting forever. Wrapped in
//! [`WriteDeadlineIo`], a connection whose writes make no progress for the
//! limit fails with `TimedOut`; hyper then closes it and drops the body,
//! which frees all it held.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `inner` whose writes and flushes fail once they have been blocked for `limit`.
pub struct WriteDeadlineIo<T> {
    inner: T,
    limit: Duration,
    /// Armed when a write or flush first could not proceed; disarmed by progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<T> WriteDeadlineIo<T> {
    pub fn new(inner: T, limit: Duration) -> Self {
        WriteDeadlineIo {
            inner,
            limit,
            stalled: None,
        }
    }

    /// After the inner write answered `poll`: disarm on progress, or arm
    /// (and check) the stall timer while it waits.
    fn watch<R>(&mut self, cx: &mut Context<'_>, poll: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client read nothing of the response for {limit:?}"),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadlineIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadlineIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_reader_that_stops_fails_the_writer_and_one_that_reads_does_not() {
        let (client, server) = tokio::io::duplex(1024);
        let limit = Duration::from_millis(300);
        let mut writer = WriteDeadlineIo::new(server, limit);
        let mut reader = client;
        // A reader that keeps reading: many times the buffer arrives, no error.
        let reading = tokio::spawn(async move {
            let mut buf = vec![0; 64 * 1024];
            reader.read_exact(&mut buf).await.map(|_| reader)
        });
        let chunk = vec![7u8; 4096];
        for _ in 0..16 {
            writer.write_all(&chunk).await.unwrap();
        }
        let _reader = reading.await.unwrap().unwrap();
        // The reader stops: the write blocks on the full buffer, then fails.
        let started = std::time::Instant::now();
        let mut error = None;
        for _ in 0..1000 {
            if let Err(e) = writer.write_all(&chunk).await {
                error = Some(e);
                break;
            }
        }
        let error = error.expect("the stalled write failed");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= limit, "{:?}", started.elapsed());
    }
}
