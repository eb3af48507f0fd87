//! Storage: accounts and balances, API keys, the credit ledger, and the
//! service's other shared state (idempotency keys, holds, jobs, webhooks,
//! canaries, console users and sessions). One public API ([`Store`]) over
//! two backends: SQLite (rusqlite, bundled; one file, WAL mode, migrations by
//! `user_version`; the embedded default) and PostgreSQL (a pool, for several
//! hosts on one database). This crate names nothing of the host above it
//! but `mediaparse-core` and `mediaparse-metrics`.
//!
//! Calls are blocking; each call the service makes while it runs also has
//! an awaited twin named `<call>_async`, beside it in its subject's file
//! (`awaited` holds the one way they wait). On SQLite an awaited write
//! queues for the writer thread (`sqlite::writer`), which commits writes in
//! groups, and is awaited without holding a thread; an awaited read runs
//! the blocking call on a blocking thread inside the store (the pre-check's
//! balance read answers on the caller's thread when it would not wait). On
//! PostgreSQL the parse path's twins (the charge, the idempotency keys, the
//! client's request id, the holds, the key lookup and the balance read) run
//! on an async pool (`pg/async_pool.rs`) and hold no thread; the other
//! awaited calls run the blocking call on a blocking thread inside the
//! store. So the host awaits these rather than holding a blocking thread of
//! its own for the store (`cargo xtask blocking`). A write's SQLite body
//! works inside its caller's transaction: the writer thread's savepoint for
//! the awaited twin, a transaction of its own (`dispatch_tx!`) for the
//! blocking call.
//!
//! The layout, by subject: a top-level file (`keys.rs`, `holds.rs`, …) is
//! the facade: the subject's types and its `Store` methods, which validate
//! their input and dispatch on [`Backend`] (`dispatch!`). The body of each
//! method on each backend is in the same-named file of `sqlite/` and `pg/`
//! (`sqlite/keys.rs`, `pg/keys.rs`); `expired_holds.rs` holds the awaited
//! twin of the holds' sweep beside `holds.rs`. Beside them `sqlite/mod.rs` and
//! `sqlite/writer.rs` (the connections, the group-commit thread),
//! `pg/mod.rs`, `pg/connect.rs`, `pg/pool.rs` and `pg/key_cache.rs` (the
//! pool, the URL and its TLS, the key cache's listener) are each backend's
//! own machinery; `schema/` holds both migration lists side by side;
//! `tests/` every test of the crate, a test of behaviour both backends have
//! running on both.

mod accounts;
mod async_writes;
mod awaited;
mod backup;
mod canaries;
mod copy;
mod daily;
mod delivery;
mod expired_holds;
pub mod holds;
mod idempotency;
mod jobs;
mod key_cache;
mod keys;
mod location;
mod pg;
mod probe;
mod rate_buckets;
mod schema;
mod sessions;
mod sqlite;
#[doc(hidden)]
pub mod test_pg;
#[cfg(test)]
mod tests;
mod tunnel_usage;
mod usage;
mod usage_daily;
mod users;
mod webhooks;

pub use backup::BackupSummary;
pub use canaries::{CANARY_RESULTS_KEPT, CanaryRow};
pub use copy::{CopySummary, copy_sqlite_to_postgres};
pub use location::{DbLocation, DbLocationError};
pub use pg::{CHARGE_SETTLE_BUDGET, POOL_RESERVE, parses_for_pool, pool_size_for};
pub use probe::{Probe, probe};
pub use schema::SCHEMA_VERSION;
pub use sqlite::backup::backup_sqlite;
pub use sqlite::writer::{CommitStats, MAX_GROUP};

pub use accounts::{AccountSummary, CreditChange, GrantRecord, MAX_CREDITS, MAX_REASON_CHARS};
pub use daily::DailyCredits;
pub use holds::{HoldRequest, Reserved};
pub use idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse};
pub use jobs::JobRecord;
pub use keys::{KeyEdit, KeyRecord};
pub use sessions::SessionRecord;
pub use tunnel_usage::{TunnelTraffic, TunnelUsage, TunnelUsageGroup};
pub use usage::{Usage, UsageEntry, UsageFilter, UsageGroup};
pub use users::{SIGN_UP_GRANT_REASON, SignInRecord, SignUpOutcome, UserRecord, normalize_email};
pub use webhooks::{
    AttemptOutcome, AttemptRecord, ClaimedDelivery, DeliveryFilter, DeliveryRecord,
    MAX_LISTED as MAX_LISTED_DELIVERIES,
};

use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("no such {0}: {1}")]
    NotFound(&'static str, String),
    #[error("{0}")]
    Invalid(String),
    #[error(
        "the database has schema version {found}, newer than this binary's {supported}: \
         run the newer mediaparse (or restore a backup taken before the upgrade)"
    )]
    SchemaTooNew { found: u32, supported: u32 },
    #[error("{0}")]
    Unsupported(String),
    #[error("database error: {0}")]
    Postgres(postgres::Error),
    /// The database cannot be reached (stopped, restarting, pool exhausted):
    /// the request may be retried.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// A charge's ledger request id already names another charge (another
    /// account, key or platform): refused, so no parse passes as charged.
    #[error("ledger request id {0} already belongs to another charge")]
    LedgerIdTaken(String),
    /// The account already has this many keys, the most it may have.
    #[error("the account already has {0} keys, the most it may have; delete one first")]
    KeyLimit(u32),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// One charge to take: the account and key that pay, the platform and
/// price of the parse, and the ledger request id it is taken under (at
/// most once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bill {
    pub account: String,
    pub key_id: String,
    pub platform: String,
    pub price: i64,
    pub request_id: String,
}

impl Bill {
    pub fn new(account: &str, key_id: &str, platform: &str, price: i64, request_id: &str) -> Bill {
        Bill {
            account: account.to_string(),
            key_id: key_id.to_string(),
            platform: platform.to_string(),
            price,
            request_id: request_id.to_string(),
        }
    }
}

/// Outcome of a conditional charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    Charged { balance_after: i64 },
    InsufficientCredits { balance: i64 },
}

/// A handle to the database; cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    /// Token hash → key, dropped on every key change anywhere.
    keys: Arc<key_cache::KeyCache>,
}

/// Where the books are kept.
#[derive(Clone)]
enum Backend {
    Sqlite(Arc<sqlite::Sqlite>),
    Postgres(pg::Pg),
}

/// Dispatch one call: `$sqlite` runs with the SQLite writer `$c`,
/// `$pg` with the PostgreSQL pool `$p`.
macro_rules! dispatch {
    ($self:ident, |$c:ident| $sqlite:expr, |$p:ident| $pg:expr) => {
        match &$self.backend {
            Backend::Sqlite(_) => $self.with(|$c| $sqlite),
            Backend::Postgres($p) => $pg,
        }
    };
}
pub(crate) use dispatch;

/// [`dispatch!`] for a report that only reads: on SQLite `$c` is one of the
/// read-only connections.
macro_rules! dispatch_read {
    ($self:ident, |$c:ident| $sqlite:expr, |$p:ident| $pg:expr) => {
        match &$self.backend {
            Backend::Sqlite(_) => $self.read(|$c| $sqlite),
            Backend::Postgres($p) => $pg,
        }
    };
}
pub(crate) use dispatch_read;

/// [`dispatch!`] for a write whose SQLite body works inside its caller's
/// transaction (the writer thread's savepoint for the async twin): on the
/// blocking path it runs in one immediate transaction of its own.
macro_rules! dispatch_tx {
    ($self:ident, |$c:ident| $sqlite:expr, |$p:ident| $pg:expr) => {
        match &$self.backend {
            Backend::Sqlite(_) => $self.with_transaction(|$c| $sqlite),
            Backend::Postgres($p) => $pg,
        }
    };
}
pub(crate) use dispatch_tx;

/// Keys one account may have unless the operator says otherwise
/// (`--max-keys-per-account`): per-key rate limits are not multiplied by
/// creating keys without end.
pub const DEFAULT_MAX_KEYS_PER_ACCOUNT: u32 = 20;

impl Store {
    /// Open the database `--db` names, applying missing migrations.
    pub fn connect(location: &DbLocation) -> StoreResult<Store> {
        match location {
            DbLocation::Sqlite(path) => Store::open(path),
            DbLocation::Postgres(url) => Ok(Store {
                backend: Backend::Postgres(pg::Pg::connect(url)?),
                keys: Default::default(),
            }),
        }
    }

    /// [`Store::connect`] for a service admitting `max_parses` parses at
    /// once: on PostgreSQL its pool holds one connection per admitted parse
    /// plus a reserve, bounded by `pool_cap` (`--pg-pool-size`) and by the
    /// server's connection limit ([`pg::pool_size_for`]).
    pub fn connect_for_parses(
        location: &DbLocation,
        max_parses: usize,
        pool_cap: Option<u32>,
    ) -> StoreResult<Store> {
        match location {
            DbLocation::Sqlite(path) => Store::open(path),
            DbLocation::Postgres(url) => Ok(Store {
                backend: Backend::Postgres(pg::Pg::connect_for_parses(url, max_parses, pool_cap)?),
                keys: Default::default(),
            }),
        }
    }

    /// [`Store::connect_for_parses`], awaited.
    pub async fn connect_for_parses_async(
        location: &DbLocation,
        max_parses: usize,
        pool_cap: Option<u32>,
    ) -> StoreResult<Store> {
        let location = location.clone();
        awaited::blocking(move || Store::connect_for_parses(&location, max_parses, pool_cap)).await
    }

    /// The PostgreSQL pool's size (`None` on SQLite).
    pub fn pg_pool_size(&self) -> Option<u32> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pg) => Some(pg.pool_size()),
        }
    }

    /// Open (creating if needed) and migrate the database file.
    pub fn open(path: &Path) -> StoreResult<Store> {
        let keys: Arc<key_cache::KeyCache> = Default::default();
        Ok(Store {
            backend: Backend::Sqlite(Arc::new(sqlite::Sqlite::open(path, keys.clone())?)),
            keys,
        })
    }

    /// Which backend this store runs on (`sqlite` or `postgres`), for logs.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> StoreResult<u32> {
        dispatch!(self, |c| Ok(schema::sqlite::version(c)?), |p| p
            .schema_version())
    }

    /// The totals of the books (what a backup or a copy must reproduce).
    pub fn summary(&self) -> StoreResult<BackupSummary> {
        dispatch!(self, |c| sqlite::backup::summarize(c), |p| p.summary())
    }

    /// Run `f` on the SQLite connection. On PostgreSQL this is `Unsupported`:
    /// the caller's query has no PostgreSQL body yet.
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> StoreResult<T>) -> StoreResult<T> {
        let Backend::Sqlite(db) = &self.backend else {
            return Err(StoreError::Unsupported(
                "this operation is not available on PostgreSQL yet".into(),
            ));
        };
        f(&mut sqlite::lock(&db.writer))
    }

    /// Run `f` in one immediate transaction on the SQLite write connection,
    /// committed if `f` succeeds (rolled back otherwise).
    fn with_transaction<T>(&self, f: impl FnOnce(&Connection) -> StoreResult<T>) -> StoreResult<T> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// Run a read-only `f` on one of the SQLite readers (the writer when
    /// there are none).
    fn read<T>(&self, f: impl FnOnce(&mut Connection) -> StoreResult<T>) -> StoreResult<T> {
        let Backend::Sqlite(db) = &self.backend else {
            return Err(StoreError::Unsupported(
                "this operation is not available on PostgreSQL yet".into(),
            ));
        };
        if db.readers.is_empty() {
            return f(&mut sqlite::lock(&db.writer));
        }
        let i = db
            .next_reader
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f(&mut sqlite::lock(&db.readers[i % db.readers.len()]))
    }

    /// SQLite: groups and writes the writer thread committed (`None` on
    /// PostgreSQL).
    pub fn commit_stats(&self) -> Option<CommitStats> {
        match &self.backend {
            Backend::Sqlite(db) => Some(db.queue.stats()),
            Backend::Postgres(_) => None,
        }
    }

    /// SQLite: run `work` in the writer thread's next group and wait for
    /// its commit (blocking). On PostgreSQL this is `Unsupported`.
    fn write<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        match &self.backend {
            Backend::Sqlite(db) => db.queue.write(work),
            Backend::Postgres(_) => Err(StoreError::Unsupported(
                "the SQLite writer thread has no PostgreSQL counterpart".into(),
            )),
        }
    }

    /// [`Store::write`] for async callers: awaits the commit without
    /// holding a thread.
    async fn write_async<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        match &self.backend {
            Backend::Sqlite(db) => db.queue.write_async(work).await,
            Backend::Postgres(_) => Err(StoreError::Unsupported(
                "the SQLite writer thread has no PostgreSQL counterpart".into(),
            )),
        }
    }

    /// Charge `credits` if the balance still covers them: one transaction,
    /// one conditional update, one ledger row and the day's aggregate, or
    /// nothing at all; at most once per `request_id` ([`Store::charge_once`]).
    pub fn charge(
        &self,
        account: &str,
        key_id: &str,
        platform: &str,
        credits: i64,
        request_id: &str,
        now: i64,
    ) -> StoreResult<Charge> {
        self.charge_once(account, key_id, platform, credits, request_id, now)
    }
}

/// The schema version of an existing SQLite file, read without changing it.
pub fn sqlite_schema_version(path: &Path) -> StoreResult<u32> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(schema::sqlite::version(&conn)?)
}

/// The schema version of the database at `location` without migrating it
/// (`None`: a SQLite file that does not exist yet).
pub fn existing_schema_version(location: &DbLocation) -> StoreResult<Option<u32>> {
    match location {
        DbLocation::Sqlite(path) if !path.exists() => Ok(None),
        DbLocation::Sqlite(path) => sqlite_schema_version(path).map(Some),
        DbLocation::Postgres(url) => pg::Pg::connect_unmigrated(url)?.schema_version().map(Some),
    }
}

/// For what only a SQLite file can do (the online backup).
fn postgres_unavailable(location: &DbLocation) -> StoreError {
    StoreError::Unsupported(format!(
        "{location} is a PostgreSQL database; this needs a SQLite file path"
    ))
}
