//! The accept loop. `axum::serve` runs connections without any timer, so a
//! slow-loris client holds a connection forever; here hyper's HTTP/1 server
//! gets a header-read timer (hyper restarts it while a kept-alive connection
//! waits for its next request, so it is also the idle keep-alive timeout),
//! each request body gets a deadline for arriving in full, and the number of
//! open connections is bounded.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tower_layer::Layer as _;

use super::envelope::ApiError;
use mediaparse_core::ErrorCode;

/// The server's limits on clients.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time a client has to send a request's headers, counted from the
    /// connection's start or the end of the previous response (idle keep-alive).
    pub header_read: Duration,
    /// Time a client has to send a request's whole body, counted from its headers.
    pub body_read: Duration,
    /// Time a response write may stay blocked on a client that reads
    /// nothing; then the connection is closed (see `write_deadline`).
    pub response_write: Duration,
    /// Open connections at most; beyond it new connections wait in the
    /// kernel's accept queue until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
            response_write: Duration::from_secs(30),
            max_connections: 16_384,
        }
    }
}

/// Connections the kernel completes and queues for `accept` at most (it
/// caps the number at `net.core.somaxconn`). The 128 of `TcpListener::bind`
/// overflows as soon as clients connect faster than the loop below accepts:
/// a burst of new connections then has SYNs dropped and waits a second per
/// retransmission, however idle the service is.
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listening socket on `addr` with [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`,
/// as `TcpListener::bind` sets it, so a restart rebinds at once).
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serve `app` on `listener` until `shutdown` resolves, then stop accepting
/// and wait for the open connections to finish their requests.
pub async fn run(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let app = app.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| body_deadline(limits.body_read, request, next),
    ));
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, peer),
                Err(e) => {
                    // Out of file descriptors and the like: back off rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // The client's address, for per-address limits (the console's sign-in throttle).
        let service = TowerToHyperService::new(
            axum::Extension(axum::extract::ConnectInfo(peer)).layer(app.clone()),
        );
        let io = super::write_deadline::WriteDeadlineIo::new(stream, limits.response_write);
        let connection = graceful.watch(http.serve_connection(TokioIo::new(io), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Give the request body its deadline. Whatever door read it (a JSON
/// extractor, a console form, rmcp's own reader) and however it reported the
/// failed read, a request whose body timed out is answered
/// `408 request_timeout` with the error envelope, never a `400` or `500`.
async fn body_deadline(limit: Duration, request: Request, next: Next) -> Response {
    let expired = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| Body::new(DeadlineBody::new(body, limit, expired.clone())));
    let response = next.run(request).await;
    let failed = response.status().is_client_error() || response.status().is_server_error();
    if !expired.load(Ordering::Acquire)
        || !failed
        || response.status() == StatusCode::REQUEST_TIMEOUT
    {
        return response;
    }
    let mut timeout = ApiError::of(ErrorCode::RequestTimeout).into_response();
    // The request id, and the cost (0) on a door that states it.
    for name in [super::request_id::HEADER, super::envelope::CREDITS_HEADER] {
        if let Some(value) = response.headers().get(name) {
            timeout.headers_mut().insert(name, value.clone());
        }
    }
    timeout
}

/// The error a request body read fails with after its deadline.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyDeadline(pub Duration);

impl BodyDeadline {
    /// Whether `error` (or what it wraps) is a body deadline.
    pub fn is_in(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut current = Some(error);
        while let Some(e) = current {
            if e.is::<BodyDeadline>() {
                return true;
            }
            current = e.source();
        }
        false
    }
}

/// A request body that fails once its deadline passes, however steadily
/// the client trickles bytes (a per-read timeout would not stop that).
struct DeadlineBody {
    inner: Body,
    deadline: Pin<Box<Sleep>>,
    limit: Duration,
    /// Set when the deadline failed a read.
    expired: Arc<AtomicBool>,
}

impl DeadlineBody {
    fn new(inner: Body, limit: Duration, expired: Arc<AtomicBool>) -> Self {
        DeadlineBody {
            inner,
            deadline: Box::pin(tokio::time::sleep_until(Instant::now() + limit)),
            limit,
            expired,
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.expired.store(true, Ordering::Release);
                Poll::Ready(Some(Err(BodyDeadline(self.limit).into())))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
