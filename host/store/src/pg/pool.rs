//! The connection pool's manager and size.
//!
//! Connections carry the pool's *generation* at the time they were opened.
//! When a connection comes back to the pool closed (the server ended it: a
//! restart, a fail-over, an administrator's `pg_terminate_backend`), the
//! generation moves on, and every idle connection from before is discarded
//! at its next checkout without a round trip. So after a server restart the
//! second call already gets a fresh connection, however many idle ones the
//! pool held: recovery does not depend on the pool's size.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use r2d2_postgres::PostgresConnectionManager;
use r2d2_postgres::r2d2::ManageConnection;
use tokio_postgres_rustls::MakeRustlsConnect;

/// Connections a host keeps beside one per admitted parse: the console, the
/// tunnel's key checks, the admin API, the shared rate limits' counts.
pub const POOL_RESERVE: u32 = 8;

/// Connections per host when nothing sizes the pool (the CLI's one-shot
/// commands, tests): the service sizes it with [`pool_size_for`].
pub const DEFAULT_POOL_SIZE: u32 = 16;

/// The pool for a host admitting `max_parses` parses at once: one connection
/// per parse in flight plus [`POOL_RESERVE`], at most `cap` (the operator's
/// `--pg-pool-size`) and at most `server_allows` (the connections the server
/// takes from ordinary users), and at least 1.
pub fn pool_size_for(max_parses: usize, cap: Option<u32>, server_allows: Option<u32>) -> u32 {
    let wanted = u32::try_from(max_parses)
        .unwrap_or(u32::MAX)
        .saturating_add(POOL_RESERVE);
    wanted
        .min(cap.unwrap_or(u32::MAX))
        .min(server_allows.unwrap_or(u32::MAX))
        .max(1)
}

/// The parses a pool of `pool_size` lends a connection to at once, each
/// beside the reserve (at least 1): admission is clamped to it.
pub fn parses_for_pool(pool_size: u32) -> usize {
    usize::try_from(pool_size.saturating_sub(POOL_RESERVE).max(1)).unwrap_or(1)
}

/// A pooled client and the generation it was opened in; dereferences to the
/// `postgres` client.
pub struct Connection {
    client: postgres::Client,
    generation: u64,
}

impl std::ops::Deref for Connection {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        &self.client
    }
}

impl std::ops::DerefMut for Connection {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    /// Opened before a connection of the pool was found lost.
    #[error("connection opened before the server was last lost")]
    Stale,
}

/// [`PostgresConnectionManager`] with generations (see the module's text).
pub struct Manager {
    inner: PostgresConnectionManager<MakeRustlsConnect>,
    generation: Arc<AtomicU64>,
}

impl Manager {
    pub fn new(config: postgres::Config, tls: MakeRustlsConnect) -> Manager {
        Manager {
            inner: PostgresConnectionManager::new(config, tls),
            generation: Arc::default(),
        }
    }
}

impl ManageConnection for Manager {
    type Connection = Connection;
    type Error = ManagerError;

    fn connect(&self) -> Result<Connection, ManagerError> {
        // Read before connecting: a loss noticed meanwhile marks this one
        // stale too (one reconnect too many, never a dead one kept).
        let generation = self.generation.load(Ordering::SeqCst);
        Ok(Connection {
            client: self.inner.connect()?,
            generation,
        })
    }

    /// No round trip (it would cost one on every call): only the generation.
    /// A connection that died unnoticed fails its call, is answered
    /// `database_unavailable`, and moves the generation on its return.
    fn is_valid(&self, conn: &mut Connection) -> Result<(), ManagerError> {
        if conn.generation < self.generation.load(Ordering::SeqCst) {
            return Err(ManagerError::Stale);
        }
        Ok(())
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        if conn.client.is_closed() {
            // The first lost connection of a generation ends it; the others
            // from the same loss find it already ended.
            let _ = self.generation.compare_exchange(
                conn.generation,
                conn.generation + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
            return true;
        }
        conn.generation < self.generation.load(Ordering::SeqCst)
    }
}

/// The pool's own errors at debug level: discarding a stale connection is
/// routine, and a failed connect reaches the call that waited for it (logged
/// there as `database_unavailable`); during an outage the pool retries
/// connects many times a second.
#[derive(Debug)]
pub struct ErrorLog;

impl r2d2_postgres::r2d2::HandleError<ManagerError> for ErrorLog {
    fn handle_error(&self, error: ManagerError) {
        match error {
            ManagerError::Stale => {
                tracing::debug!(
                    "idle PostgreSQL connection from before a lost connection discarded"
                )
            }
            ManagerError::Postgres(e) => {
                tracing::debug!(error = %e, "PostgreSQL connection failed")
            }
        }
    }
}
