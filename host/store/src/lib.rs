//! Storage: accounts and balances, API keys, the credit ledger. One public
//! API ([`Store`]) over two backends: SQLite (rusqlite, bundled; one file,
//! WAL mode, migrations by `user_version`; the embedded default) and
//! PostgreSQL (a pool, for several hosts on one database; `pg`).
//! Calls are blocking (async callers go through `tokio::task::spawn_blocking`),
//! except the parse path's writes, which have async twins (`async_writes`:
//! [`Store::charge_attempt_async`], the idempotency keys, the client's
//! request id). On SQLite those writes, blocking or async, queue for the
//! writer thread (`sqlite::writer`), which commits them in groups.
//!
//! Each method validates its input, then dispatches on [`Backend`]. A new
//! store file adds its SQLite body through `Store::with` (which answers
//! `Unsupported` on PostgreSQL until the file gets its PostgreSQL body).

mod accounts;
mod async_writes;
mod backup;
mod canaries;
mod copy;
mod daily;
mod delivery;
pub mod holds;
mod idempotency;
mod jobs;
mod key_cache;
mod keys;
mod location;
mod pg;
mod probe;
mod rate_buckets;
mod report;
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

pub use backup::{BackupSummary, backup_sqlite};
pub use canaries::{CANARY_RESULTS_KEPT, CanaryRow};
pub use copy::{CopySummary, copy_sqlite_to_postgres};
pub use location::{DbLocation, DbLocationError};
pub use pg::{CHARGE_SETTLE_BUDGET, POOL_RESERVE, parses_for_pool, pool_size_for};
pub use probe::{Probe, probe};
pub use schema::SCHEMA_VERSION;
pub use sqlite::writer::{CommitStats, MAX_GROUP};

pub use accounts::{AccountSummary, CreditChange, GrantRecord, MAX_CREDITS, MAX_REASON_CHARS};
pub use daily::DailyCredits;
pub use holds::{HoldRequest, Reserved};
pub use idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse};
pub use jobs::JobRecord;
pub use keys::KeyEdit;
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

use rusqlite::{Connection, OptionalExtension, params};

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

/// A stored API key (the token itself is never stored, only its SHA-256).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyRecord {
    pub id: String,
    pub account_id: String,
    pub name: String,
    /// Short display prefix of the token.
    pub token_prefix: String,
    /// Last valid day (UTC), `YYYY-MM-DD`; `None` = permanent.
    pub expires_on: Option<String>,
    /// Allowed platforms; `None` = all.
    pub platforms: Option<Vec<String>>,
    pub created_at: i64,
    pub rotated_at: Option<i64>,
    /// Requests per minute for this key; `None` = the service default, `Some(0)` = unlimited.
    pub rate_limit_per_minute: Option<u32>,
    /// How this key's media is delivered when a request does not say
    /// (`None`: the service default, direct). Read with the key, so a parse
    /// reads the key once; set with [`Store::key_delivery`].
    #[serde(skip)]
    pub delivery: Option<mediaparse_core::Delivery>,
}

impl KeyRecord {
    /// A plain key of `account` for unit tests: no expiry, every platform,
    /// no own rate limit, never rotated.
    #[doc(hidden)]
    pub fn for_tests(id: &str, account: &str) -> KeyRecord {
        KeyRecord {
            id: id.into(),
            account_id: account.into(),
            name: String::new(),
            token_prefix: "mp_live_ab".into(),
            expires_on: None,
            platforms: None,
            created_at: 0,
            rotated_at: None,
            rate_limit_per_minute: None,
            delivery: None,
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
        dispatch!(self, |c| backup::summarize(c), |p| p.summary())
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

    /// Create the account if it does not exist.
    pub fn ensure_account(&self, account: &str, now: i64) -> StoreResult<()> {
        dispatch!(
            self,
            |c| {
                c.execute(
                    "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                    params![account, now],
                )?;
                Ok(())
            },
            |p| p.ensure_account(account, now)
        )
    }

    pub fn balance(&self, account: &str) -> StoreResult<i64> {
        dispatch!(
            self,
            |c| {
                c.query_row(
                    "SELECT balance FROM accounts WHERE id = ?1",
                    [account],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound("account", account.into()))
            },
            |p| p.balance(account)
        )
    }

    /// Add credits (creating the account); returns the new balance.
    pub fn add_credits(&self, account: &str, amount: i64, now: i64) -> StoreResult<i64> {
        self.add_credits_noted(account, amount, None, now)
    }

    /// Add credits with the operator's reason, kept in the grants log.
    pub fn add_credits_noted(
        &self,
        account: &str,
        amount: i64,
        reason: Option<&str>,
        now: i64,
    ) -> StoreResult<i64> {
        accounts::validate_account_id(account)?;
        let reason = accounts::checked_reason(reason)?;
        if amount <= 0 || amount > MAX_CREDITS {
            return Err(StoreError::Invalid(format!(
                "credits to add must be a number from 1 to {MAX_CREDITS}"
            )));
        }
        dispatch!(
            self,
            |c| {
                let tx = c.transaction()?;
                tx.execute(
                    "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                    params![account, now],
                )?;
                let updated = tx.execute(
                "UPDATE accounts SET balance = balance + ?2 WHERE id = ?1 AND balance + ?2 <= ?3",
                params![account, amount, MAX_CREDITS],
            )?;
                if updated != 1 {
                    return Err(StoreError::Invalid(format!(
                        "a balance cannot exceed {MAX_CREDITS} credits"
                    )));
                }
                tx.execute(
                "INSERT INTO credit_grants (account_id, credits, created_at, reason) VALUES (?1, ?2, ?3, ?4)",
                params![account, amount, now, reason],
            )?;
                let balance = tx.query_row(
                    "SELECT balance FROM accounts WHERE id = ?1",
                    [account],
                    |r| r.get(0),
                )?;
                tx.commit()?;
                Ok(balance)
            },
            |p| p.add_credits(account, amount, reason, now)
        )
    }

    pub fn insert_key(&self, key: &KeyRecord, token_hash: &[u8]) -> StoreResult<()> {
        self.insert_key_within(key, token_hash, None)
    }

    /// Insert a key unless its account already has `max_keys` keys
    /// (`KeyLimit`); counted and inserted in one transaction, so concurrent
    /// creations cannot pass the bound together.
    pub fn insert_key_within(
        &self,
        key: &KeyRecord,
        token_hash: &[u8],
        max_keys: Option<u32>,
    ) -> StoreResult<()> {
        accounts::validate_account_id(&key.account_id)?;
        dispatch!(
            self,
            |c| {
                let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                tx.execute(
                    "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                    params![key.account_id, key.created_at],
                )?;
                if let Some(max) = max_keys {
                    let count: i64 = tx.query_row(
                        "SELECT COUNT(*) FROM api_keys WHERE account_id = ?1",
                        [&key.account_id],
                        |r| r.get(0),
                    )?;
                    if count >= i64::from(max) {
                        return Err(StoreError::KeyLimit(max));
                    }
                }
                tx.execute(
                "INSERT INTO api_keys (id, account_id, name, token_hash, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    key.id,
                    key.account_id,
                    key.name,
                    token_hash,
                    key.token_prefix,
                    key.expires_on,
                    key.platforms.as_ref().map(|p| p.join(",")),
                    key.created_at,
                    key.rotated_at,
                    key.rate_limit_per_minute
                ],
            )?;
                tx.commit()?;
                Ok(())
            },
            |p| p.insert_key(key, token_hash, max_keys)
        )
    }

    /// Use a cached key for at most `ttl` before reading it again (zero:
    /// keys are not cached), whatever change notifications say.
    pub fn set_key_cache_ttl(&self, ttl: std::time::Duration) {
        self.keys.set_ttl(ttl);
    }

    /// The key whose token hashes to `token_hash`, from the key cache when
    /// it holds it (see `key_cache` for how changes anywhere reach it).
    pub fn key_by_token_hash(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        let usable = match &self.backend {
            Backend::Sqlite(db) => {
                // Another connection's commit (the CLI) changes data_version;
                // only a cached answer needs that check (a miss is read
                // fresh below), so an unknown token never waits for the writer.
                let needs_check =
                    self.keys.get(token_hash).0.is_some() || !self.keys.data_version_known();
                !needs_check || self.sqlite_keys_checked(db)?
            }
            Backend::Postgres(p) => {
                self.keys.start_listener(p.connector());
                self.keys.usable()
            }
        };
        let (cached, generation) = self.keys.get(token_hash);
        if usable && let Some(key) = cached {
            return Ok(Some(key));
        }
        // On SQLite a read-only connection: the last committed keys, without
        // waiting for a charge in progress.
        let key = dispatch_read!(
            self,
            |c| {
                Ok(c.prepare_cached(&format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = ?1"
                ))?
                .query_row([token_hash], key_from_row)
                .optional()?)
            },
            |p| p.key_by_token_hash(token_hash)
        )?;
        if usable && let Some(key) = &key {
            self.keys.put(token_hash, key, generation);
        }
        Ok(key)
    }

    /// The key whose token hashes to `token_hash` when the key cache can
    /// answer at once, without waiting for anything (`None`: ask
    /// [`Store::key_by_token_hash`], which may read the database). On SQLite
    /// the cache is first checked against other processes' commits, as
    /// there, but only when the write connection is free this instant.
    pub fn cached_key(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        if self.keys.get(token_hash).0.is_none() {
            return Ok(None);
        }
        let usable = match &self.backend {
            Backend::Sqlite(db) => {
                self.keys.data_version_known() && self.sqlite_keys_checked(db)?
            }
            Backend::Postgres(p) => {
                self.keys.start_listener(p.connector());
                self.keys.usable()
            }
        };
        Ok(if usable {
            self.keys.get(token_hash).0
        } else {
            None
        })
    }

    /// SQLite: check the key cache against other processes' commits
    /// without waiting for the writer: read `data_version` on the write
    /// connection when it is free; while the writer thread holds the write
    /// lock, nobody else can commit and it checked the cache under that
    /// lock. Otherwise (another write of this process is under way) the
    /// cache is not used for this lookup (`false`).
    fn sqlite_keys_checked(&self, db: &sqlite::Sqlite) -> StoreResult<bool> {
        let conn = match db.writer.try_lock() {
            Ok(conn) => conn,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(db.queue.holds_write_lock()),
        };
        let version = conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get::<_, i64>(0))?;
        self.keys.observe_data_version(version);
        Ok(true)
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

    /// A key changed on this host: forget cached keys here at once (other
    /// hosts hear of it through the database).
    pub(crate) fn key_changed(&self) {
        self.keys.invalidate();
    }

    pub fn key(&self, id: &str) -> StoreResult<KeyRecord> {
        dispatch!(
            self,
            |c| {
                c.query_row(
                    &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
                    [id],
                    key_from_row,
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound("key", id.into()))
            },
            |p| p.key(id)
        )
    }

    pub fn keys(&self) -> StoreResult<Vec<KeyRecord>> {
        dispatch!(
            self,
            |c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"
                ))?;
                let rows = stmt.query_map([], key_from_row)?;
                Ok(rows.collect::<Result<_, _>>()?)
            },
            |p| p.keys()
        )
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

    /// Sum of credits in the ledger for an account (or all accounts).
    pub fn ledger_sum(&self, account: Option<&str>) -> StoreResult<i64> {
        dispatch!(
            self,
            |c| {
                Ok(match account {
                    Some(a) => c.query_row(
                        "SELECT COALESCE(SUM(credits), 0) FROM ledger WHERE account_id = ?1",
                        [a],
                        |r| r.get(0),
                    )?,
                    None => {
                        c.query_row("SELECT COALESCE(SUM(credits), 0) FROM ledger", [], |r| {
                            r.get(0)
                        })?
                    }
                })
            },
            |p| p.ledger_sum(account)
        )
    }

    pub fn ledger_count(&self, account: Option<&str>) -> StoreResult<i64> {
        dispatch!(
            self,
            |c| {
                Ok(match account {
                    Some(a) => c.query_row(
                        "SELECT COUNT(*) FROM ledger WHERE account_id = ?1",
                        [a],
                        |r| r.get(0),
                    )?,
                    None => c.query_row("SELECT COUNT(*) FROM ledger", [], |r| r.get(0))?,
                })
            },
            |p| p.ledger_count(account)
        )
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

const KEY_COLUMNS: &str = "id, account_id, name, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute, delivery";

fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    let platforms: Option<String> = r.get(5)?;
    Ok(KeyRecord {
        id: r.get(0)?,
        account_id: r.get(1)?,
        name: r.get(2)?,
        token_prefix: r.get(3)?,
        expires_on: r.get(4)?,
        platforms: platforms.map(|p| {
            p.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        }),
        created_at: r.get(6)?,
        rotated_at: r.get(7)?,
        rate_limit_per_minute: r.get(8)?,
        delivery: delivery_of(r.get(9)?),
    })
}

/// A stored delivery setting (the column accepts only the two names).
pub(crate) fn delivery_of(column: Option<String>) -> Option<mediaparse_core::Delivery> {
    column.and_then(|d| d.parse().ok())
}
