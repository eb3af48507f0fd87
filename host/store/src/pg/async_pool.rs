//! The async pool: deadpool over `tokio-postgres` clients, for the parse
//! path's statements (see `pg/mod.rs` for which those are).
//!
//! Each client's connection runs as a task of the runtime that opened it,
//! so a connection the server ends (a restart, a fail-over,
//! `pg_terminate_backend`) is seen closed without a round trip; checkout
//! (`recycle`, deadpool's `RecyclingMethod::Fast`: no query) discards it.
//! Beside that, as in the blocking pool (`pool.rs`), connections carry the
//! pool's *generation*: a client found closed, at checkout or when it comes
//! back from a call, moves the generation on, and every idle connection from
//! before is discarded at its next checkout. So after a server restart at
//! most one call fails (answered `database_unavailable`, retried by the
//! charge's settle loop), however many idle connections the pool held.
//!
//! Connections are opened on demand. Opening one to a host *name* resolves
//! it with tokio's resolver, which runs on a blocking thread, once per new
//! connection; a host given as an address needs none.
//!
//! Statements a method sends together are pipelined: [`pipeline`] sends
//! them in order on one client before awaiting any answer (tokio-postgres
//! queues them on the connection), so they cost one round trip.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use deadpool_postgres::{ClientWrapper, ManagerConfig, RecyclingMethod};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::{StoreError, StoreResult};

/// A pooled async client and the generation it was opened in.
pub struct Connection {
    client: ClientWrapper,
    generation: u64,
}

/// deadpool-postgres's manager (fast recycling: the closed check, no
/// query) with generations (see the module's text).
pub struct Manager {
    inner: deadpool_postgres::Manager,
    generation: Arc<AtomicU64>,
}

impl Manager {
    fn new(config: tokio_postgres::Config, tls: MakeRustlsConnect) -> Manager {
        let recycling = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        Manager {
            inner: deadpool_postgres::Manager::from_config(config, tls, recycling),
            generation: Arc::default(),
        }
    }
}

/// The first lost connection of a generation ends it; the others from the
/// same loss find it already ended.
fn end_generation(generation: &AtomicU64, of: u64) {
    let _ = generation.compare_exchange(of, of + 1, Ordering::SeqCst, Ordering::SeqCst);
}

impl managed::Manager for Manager {
    type Type = Connection;
    type Error = tokio_postgres::Error;

    async fn create(&self) -> Result<Connection, tokio_postgres::Error> {
        // Read before connecting: a loss noticed meanwhile marks this one
        // stale too (one reconnect too many, never a dead one kept).
        let generation = self.generation.load(Ordering::SeqCst);
        Ok(Connection {
            client: managed::Manager::create(&self.inner).await?,
            generation,
        })
    }

    async fn recycle(
        &self,
        conn: &mut Connection,
        metrics: &Metrics,
    ) -> RecycleResult<tokio_postgres::Error> {
        if conn.client.is_closed() {
            end_generation(&self.generation, conn.generation);
            return Err(RecycleError::message("connection closed"));
        }
        if conn.generation < self.generation.load(Ordering::SeqCst) {
            return Err(RecycleError::message(
                "connection opened before the server was last lost",
            ));
        }
        managed::Manager::recycle(&self.inner, &mut conn.client, metrics).await
    }

    fn detach(&self, conn: &mut Connection) {
        managed::Manager::detach(&self.inner, &mut conn.client);
    }
}

/// A pool of async clients to one database; cheap to clone.
#[derive(Clone)]
pub struct AsyncPool {
    pool: managed::Pool<Manager>,
    generation: Arc<AtomicU64>,
}

impl AsyncPool {
    /// A pool of at most `size` connections, opened on demand (none now);
    /// a checkout waits at most `checkout_timeout`, in all.
    pub fn new(
        config: tokio_postgres::Config,
        tls: MakeRustlsConnect,
        size: u32,
        checkout_timeout: Duration,
    ) -> StoreResult<AsyncPool> {
        let manager = Manager::new(config, tls);
        let generation = manager.generation.clone();
        let pool = managed::Pool::builder(manager)
            .max_size(usize::try_from(size.max(1)).unwrap_or(1))
            .runtime(deadpool::Runtime::Tokio1)
            .wait_timeout(Some(checkout_timeout))
            .create_timeout(Some(checkout_timeout))
            .recycle_timeout(Some(checkout_timeout))
            .build()
            .map_err(|e| StoreError::Unavailable(format!("PostgreSQL async pool: {e}")))?;
        Ok(AsyncPool { pool, generation })
    }

    /// A pooled client, or `Unavailable` when none can be had in time.
    pub async fn client(&self) -> StoreResult<AsyncClient> {
        match self.pool.get().await {
            Ok(object) => Ok(AsyncClient {
                object,
                generation: self.generation.clone(),
            }),
            Err(managed::PoolError::Backend(e)) => Err(e.into()),
            Err(e) => Err(StoreError::Unavailable(e.to_string())),
        }
    }

    /// Connections this pool holds at most.
    #[cfg(test)]
    pub fn max_size(&self) -> u32 {
        u32::try_from(self.pool.status().max_size).unwrap_or(u32::MAX)
    }

    /// Connections open now (lent or idle).
    #[cfg(test)]
    pub fn open(&self) -> usize {
        self.pool.status().size
    }
}

/// A client lent by the pool; given back when dropped. One found closed on
/// its return ends its generation (see the module's text).
pub struct AsyncClient {
    object: managed::Object<Manager>,
    generation: Arc<AtomicU64>,
}

impl std::ops::Deref for AsyncClient {
    type Target = tokio_postgres::Client;
    fn deref(&self) -> &tokio_postgres::Client {
        &self.object.client
    }
}

impl std::ops::DerefMut for AsyncClient {
    fn deref_mut(&mut self) -> &mut tokio_postgres::Client {
        &mut self.object.client
    }
}

impl Drop for AsyncClient {
    fn drop(&mut self) {
        if self.object.client.is_closed() {
            end_generation(&self.generation, self.object.generation);
        }
    }
}

/// One statement's answer in a [`pipeline`].
pub type Answer<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'a>>;

/// Send `statements` in their order before awaiting any answer (the first
/// poll of a tokio-postgres call queues its messages on the connection, and
/// the server runs them in the order received), then await every answer:
/// one round trip for all of them. The first error is the answer; the
/// statements after a failed one in a transaction fail with it.
pub async fn pipeline<T>(
    mut statements: Vec<Answer<'_, T>>,
) -> Result<Vec<T>, tokio_postgres::Error> {
    let mut answers: Vec<Option<Result<T, tokio_postgres::Error>>> =
        statements.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        // In order, every time: the first pass sends them in order.
        for (statement, answer) in statements.iter_mut().zip(answers.iter_mut()) {
            if answer.is_none()
                && let Poll::Ready(result) = statement.as_mut().poll(cx)
            {
                *answer = Some(result);
            }
        }
        if answers.iter().all(Option::is_some) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    answers.into_iter().flatten().collect()
}

/// Await `first` and `second` together, polling `first` first every time:
/// what `first` sends is queued before what `second` sends (a statement
/// and a [`pipeline`] behind it, in one round trip).
pub async fn both_in_order<A: Future, B: Future>(first: A, second: B) -> (A::Output, B::Output) {
    let (mut first, mut second) = (std::pin::pin!(first), std::pin::pin!(second));
    let (mut a, mut b) = (None, None);
    std::future::poll_fn(|cx| {
        if a.is_none()
            && let Poll::Ready(out) = first.as_mut().poll(cx)
        {
            a = Some(out);
        }
        if b.is_none()
            && let Poll::Ready(out) = second.as_mut().poll(cx)
        {
            b = Some(out);
        }
        match (a.take(), b.take()) {
            (Some(a), Some(b)) => Poll::Ready((a, b)),
            (x, y) => {
                (a, b) = (x, y);
                Poll::Pending
            }
        }
    })
    .await
}
