//! How an awaited call (`<call>_async`) waits: a SQLite write queues for the
//! writer thread and is awaited without holding a thread
//! ([`Store::write_async`]); a SQLite read, and a call on PostgreSQL outside
//! the parse path (whose calls run on the async pool, `pg/async_pool.rs`),
//! runs its blocking form on a blocking thread ([`blocking`]), the one place
//! the store's awaited calls hold one.

use rusqlite::Connection;

use crate::{Backend, Store, StoreError, StoreResult};

impl Store {
    /// Run the blocking call `call` on a blocking thread.
    pub(crate) async fn off_thread<T: Send + 'static>(
        &self,
        call: impl FnOnce(&Store) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let store = self.clone();
        blocking(move || call(&store)).await
    }

    /// A write: on SQLite `work` (its SQLite body) in the writer thread's
    /// next group, awaited without holding a thread; on PostgreSQL the
    /// blocking call `call` on a blocking thread.
    pub(crate) async fn write_or_off_thread<T, W, C>(&self, work: W, call: C) -> StoreResult<T>
    where
        T: Send + 'static,
        W: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
        C: FnOnce(&Store) -> StoreResult<T> + Send + 'static,
    {
        match &self.backend {
            Backend::Sqlite(_) => self.write_async(work).await,
            Backend::Postgres(_) => self.off_thread(call).await,
        }
    }
}

/// Run `f` (blocking database work) on a blocking thread, in the caller's
/// span (its logs keep the request id), and await it.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> StoreResult<T> + Send + 'static,
) -> StoreResult<T> {
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(f))
        .await
        .map_err(|e| StoreError::Invalid(format!("store task: {e}")))?
}
