//! The PostgreSQL backend: two pools to one database.
//!
//! - The async pool (`async_pool.rs`: deadpool over `tokio-postgres`) runs
//!   the parse path, which runs on the service's async workers: the charge
//!   (`charge_attempt_async`), the holds (`reserve_credits_async`,
//!   `charge_held_async`, `release_hold_async`), the Idempotency-Key records
//!   and the client's request id (`*_async` in `idempotency.rs`), and the two
//!   reads before a parse (the key lookup on a key-cache miss, the balance
//!   of the pre-check). None of them holds a thread while it waits for the
//!   server, so a slow or restarting database cannot use up the runtime's
//!   blocking threads, and statements one method sends together are
//!   pipelined (one round trip).
//! - The blocking pool (r2d2 of `postgres` clients, `pool.rs`) runs every
//!   other `Store` method: the service's awaited calls outside the parse path
//!   (the console, the admin API, the background tasks) run their blocking
//!   form on a blocking thread inside the store (`awaited.rs`), and the
//!   blocking client needs no runtime, which the CLI's one-shot commands and
//!   the migrations do not have. The blocking
//!   twins of the parse path's methods stay too, for those callers.
//!
//! Both pools are sized alike (`pool_size_for`, each taking at most half of
//! what the server allows) and both recover from a server restart the same
//! way (a lost connection discards every idle one from before it).
//!
//! The books are the same as on SQLite: a charge is one transaction with a
//! conditional decrement and a ledger row whose id (`GENERATED ALWAYS AS
//! IDENTITY`) is minted by the database, so it is unique across every host.
//!
//! The files beside this one hold the PostgreSQL body of each `Store`
//! method, by subject, named as the SQLite ones under `sqlite/`: the same
//! queries in PostgreSQL's dialect (`$n` placeholders, `ON CONFLICT DO
//! NOTHING`, `SUM` cast back to `BIGINT`). Each method is one statement or
//! one transaction on one pooled connection. The statements of a parse
//! (balance, key lookup, delivery, charge, rate count) are sent typed
//! (`query_typed*`): parse, bind and execute in one round trip instead of a
//! prepare round trip first. `connect.rs` (the URL and its TLS), `pool.rs`
//! and `async_pool.rs` (the pools' managers and size) are this backend's own.

mod accounts;
pub(crate) mod async_pool;
mod backup;
mod canaries;
pub(crate) mod connect;
mod daily;
mod delivery;
mod holds;
mod idempotency;
mod jobs;
mod key_cache;
mod keys;
pub(crate) mod pool;
pub(crate) mod probe;
mod rate_buckets;
mod report;
mod sessions;
mod tunnel_usage;
mod usage;
mod usage_daily;
mod users;
mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use r2d2_postgres::r2d2;

use super::{StoreError, StoreResult};

#[cfg(test)]
pub use crate::schema::pg::{PG_MIGRATIONS, migrate_to};
pub(super) use crate::schema::pg::{PG_MIGRATIONS as MIGRATIONS, version as schema_version};
pub use connect::Connector;
pub use idempotency::CHARGE_SETTLE_BUDGET;
pub use pool::{DEFAULT_POOL_SIZE, POOL_RESERVE, parses_for_pool, pool_size_for};
pub(super) use report::Filter;

use async_pool::{AsyncClient, AsyncPool};
use pool::Manager;
pub(super) type PooledClient = r2d2::PooledConnection<Manager>;

/// How long a request waits for a pooled connection before the store answers
/// "database unavailable" (a stopped server must not hang every request).
const CHECKOUT_TIMEOUT: Duration = Duration::from_secs(2);

/// Two pools of connections to one PostgreSQL database (the module's
/// text says which calls use which); cheap to clone.
#[derive(Clone)]
pub struct Pg {
    pool: Arc<PoolHolder>,
    async_pool: AsyncPool,
    connector: Arc<Connector>,
}

/// Owns the pool so its last drop can leave an async context: the blocking
/// client closes a connection with its own runtime's `block_on`, which
/// panics on a tokio worker (a service shutting down, an async test).
struct PoolHolder(Option<r2d2::Pool<Manager>>);

impl Drop for PoolHolder {
    fn drop(&mut self) {
        let Some(pool) = self.0.take() else { return };
        if tokio::runtime::Handle::try_current().is_ok() {
            let _ = std::thread::Builder::new()
                .name("pg-pool-close".into())
                .spawn(move || drop(pool));
        }
    }
}

impl Pg {
    /// Connect (checking the server answers) and apply missing migrations.
    pub fn connect(url: &str) -> StoreResult<Pg> {
        Pg::connect_sized(url, DEFAULT_POOL_SIZE)
    }

    /// [`Pg::connect`] for a host admitting `max_parses` parses at once: the
    /// pool is sized by [`pool_size_for`], bounded by `cap` and by the
    /// connections the server takes from ordinary users.
    pub fn connect_for_parses(url: &str, max_parses: usize, cap: Option<u32>) -> StoreResult<Pg> {
        let connector = Connector::from_url(url)?;
        let mut direct = connector.connect().map_err(|e| {
            StoreError::Unavailable(format!("cannot reach PostgreSQL: {}", with_causes(&e)))
        })?;
        let server_allows = server_allows(&mut direct)?;
        drop(direct);
        // Two pools, each with a connection per parse: each may take half
        // of what the server allows.
        let size = pool_size_for(max_parses, cap, Some((server_allows / 2).max(1)));
        Pg::connect_sized(url, size)
    }

    /// [`Pg::connect`] with a pool of `pool_size` connections.
    pub fn connect_sized(url: &str, pool_size: u32) -> StoreResult<Pg> {
        let pg = Pg::connect_unmigrated_sized(url, pool_size)?;
        crate::schema::pg::migrate(&mut *pg.client()?)?;
        Ok(pg)
    }

    /// Connect without touching the schema (reading a version, copying into).
    pub fn connect_unmigrated(url: &str) -> StoreResult<Pg> {
        Pg::connect_unmigrated_sized(url, DEFAULT_POOL_SIZE)
    }

    fn connect_unmigrated_sized(url: &str, pool_size: u32) -> StoreResult<Pg> {
        let connector = Connector::from_url(url)?;
        let pool = r2d2::Pool::builder()
            .max_size(pool_size.max(1))
            .min_idle(Some(1))
            .connection_timeout(CHECKOUT_TIMEOUT)
            // The checkout test is the generation check only, no round trip
            // (see `pool`): a connection that died with the server fails its
            // next call (answered `database_unavailable`), and its return
            // discards every idle connection from before, so the hosts
            // recover by themselves when the server is back.
            .test_on_check_out(true)
            .error_handler(Box::new(pool::ErrorLog))
            .build(Manager::new(
                connector.config.clone(),
                connector.tls.clone(),
            ))
            .map_err(|e| {
                // The pool's error keeps only the outermost message ("error
                // performing TLS handshake"): one direct try tells why.
                let why = match connector.connect() {
                    Err(direct) => with_causes(&direct),
                    Ok(_) => e.to_string(),
                };
                StoreError::Unavailable(format!("cannot reach PostgreSQL: {why}"))
            })?;
        let async_pool = AsyncPool::new(
            connector.async_config.clone(),
            connector.tls.clone(),
            pool_size,
            CHECKOUT_TIMEOUT,
        )?;
        Ok(Pg {
            pool: Arc::new(PoolHolder(Some(pool))),
            async_pool,
            connector: Arc::new(connector),
        })
    }

    /// A pooled connection, or `Unavailable` when none can be had in time.
    pub(super) fn client(&self) -> StoreResult<PooledClient> {
        let Some(pool) = &self.pool.0 else {
            return Err(StoreError::Unavailable("the pool is closed".into()));
        };
        pool.get()
            .map_err(|e| StoreError::Unavailable(e.to_string()))
    }

    /// An async pooled connection, or `Unavailable` when none can be had in time.
    pub(super) async fn async_client(&self) -> StoreResult<AsyncClient> {
        self.async_pool.client().await
    }

    /// The async pool (its tests).
    #[cfg(test)]
    pub(crate) fn async_pool(&self) -> &AsyncPool {
        &self.async_pool
    }

    /// Connections each of the two pools holds at most.
    pub fn pool_size(&self) -> u32 {
        self.pool.0.as_ref().map_or(0, |p| p.max_size())
    }

    /// How this pool connects (for the key-change listener's own connection).
    pub fn connector(&self) -> &Connector {
        &self.connector
    }

    pub fn schema_version(&self) -> StoreResult<u32> {
        crate::schema::pg::version(&mut **self.client()?)
    }
}

/// Connections the server takes from ordinary users: `max_connections`
/// less the slots reserved for superusers (and, from PostgreSQL 16, for
/// `pg_use_reserved_connections`).
fn server_allows(client: &mut postgres::Client) -> StoreResult<u32> {
    let row = client.query_one(
        "SELECT current_setting('max_connections')::int
              - current_setting('superuser_reserved_connections')::int
              - coalesce(current_setting('reserved_connections', true)::int, 0)",
        &[],
    )?;
    let allows: i32 = row.get(0);
    Ok(u32::try_from(allows).unwrap_or(0).max(1))
}

/// Map a driver error: a lost or refused connection is "unavailable"
/// (a 503 for the client), anything else a database error.
impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        let io = std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
        let lost = e
            .code()
            .is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"));
        if e.is_closed() || io || lost {
            StoreError::Unavailable(with_causes(&e))
        } else {
            StoreError::Postgres(e)
        }
    }
}

/// An error with its chain of causes (`postgres::Error` shows only its own kind).
fn with_causes(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}
