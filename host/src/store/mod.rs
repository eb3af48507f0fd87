//! SQLite storage (rusqlite, bundled): accounts and balances, API keys,
//! the credit ledger. One file, WAL mode, migrations by `user_version`.
//! All calls are blocking; async callers go through `tokio::task::spawn_blocking`.
//!
//! Where the database lives is a [`DbLocation`]; PostgreSQL URLs are
//! recognised but not served yet (issue 16), and say so.

mod accounts;
mod backup;
mod daily;
mod delivery;
mod idempotency;
mod keys;
mod location;
mod schema;
#[cfg(test)]
mod schema_tests;
mod sessions;
mod tunnel_usage;
mod usage;
mod usage_daily;
mod users;

pub use backup::{BackupSummary, backup_sqlite};
pub use location::{DbLocation, DbLocationError};
pub use schema::SCHEMA_VERSION;

pub use accounts::{AccountSummary, CreditChange, MAX_CREDITS};
pub use daily::DailyCredits;
pub use idempotency::{Claim, IDEMPOTENCY_TTL_S, StoredResponse};
pub use keys::KeyEdit;
pub use sessions::SessionRecord;
pub use tunnel_usage::{TunnelTraffic, TunnelUsage, TunnelUsageGroup};
pub use usage::{Usage, UsageEntry, UsageFilter, UsageGroup};
pub use users::{SignInRecord, UserRecord};

use std::path::Path;
use std::sync::{Arc, Mutex};

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
}

pub type StoreResult<T> = Result<T, StoreError>;

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
    conn: Arc<Mutex<Connection>>,
}

impl Store {
    /// Open the database `--db` names, applying missing migrations.
    pub fn connect(location: &DbLocation) -> StoreResult<Store> {
        match location {
            DbLocation::Sqlite(path) => Store::open(path),
            DbLocation::Postgres(_) => Err(postgres_unavailable(location)),
        }
    }

    /// Open (creating if needed) and migrate the database file.
    pub fn open(path: &Path) -> StoreResult<Store> {
        let conn = open_sqlite(path)?;
        schema::migrate(&conn)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> StoreResult<u32> {
        self.with(|c| Ok(schema::version(c)?))
    }

    /// The totals of the books (what a backup or a copy must reproduce).
    pub fn summary(&self) -> StoreResult<BackupSummary> {
        self.with(|c| backup::summarize(c))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> StoreResult<T>) -> StoreResult<T> {
        // A poisoned lock only means another thread panicked mid-call; SQLite
        // rolled its transaction back, so the connection is still sound.
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut conn)
    }

    /// Create the account if it does not exist.
    pub fn ensure_account(&self, account: &str, now: i64) -> StoreResult<()> {
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)",
                params![account, now],
            )?;
            Ok(())
        })
    }

    pub fn balance(&self, account: &str) -> StoreResult<i64> {
        self.with(|c| {
            c.query_row(
                "SELECT balance FROM accounts WHERE id = ?1",
                [account],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound("account", account.into()))
        })
    }

    /// Add credits (creating the account); returns the new balance.
    pub fn add_credits(&self, account: &str, amount: i64, now: i64) -> StoreResult<i64> {
        accounts::validate_account_id(account)?;
        if amount <= 0 || amount > MAX_CREDITS {
            return Err(StoreError::Invalid(format!(
                "credits to add must be a number from 1 to {MAX_CREDITS}"
            )));
        }
        self.with(|c| {
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
                "INSERT INTO credit_grants (account_id, credits, created_at) VALUES (?1, ?2, ?3)",
                params![account, amount, now],
            )?;
            let balance = tx.query_row(
                "SELECT balance FROM accounts WHERE id = ?1",
                [account],
                |r| r.get(0),
            )?;
            tx.commit()?;
            Ok(balance)
        })
    }

    pub fn insert_key(&self, key: &KeyRecord, token_hash: &[u8]) -> StoreResult<()> {
        accounts::validate_account_id(&key.account_id)?;
        self.with(|c| {
            let tx = c.transaction()?;
            tx.execute("INSERT OR IGNORE INTO accounts (id, balance, created_at) VALUES (?1, 0, ?2)", params![key.account_id, key.created_at])?;
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
        })
    }

    /// The key whose token hashes to `token_hash`.
    pub fn key_by_token_hash(&self, token_hash: &[u8]) -> StoreResult<Option<KeyRecord>> {
        self.with(|c| {
            Ok(c.query_row(
                &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE token_hash = ?1"),
                [token_hash],
                key_from_row,
            )
            .optional()?)
        })
    }

    pub fn key(&self, id: &str) -> StoreResult<KeyRecord> {
        self.with(|c| {
            c.query_row(
                &format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?1"),
                [id],
                key_from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound("key", id.into()))
        })
    }

    pub fn keys(&self) -> StoreResult<Vec<KeyRecord>> {
        self.with(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map([], key_from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
    }

    /// Charge `credits` if the balance still covers them: one transaction,
    /// one conditional update and one ledger row, or nothing at all.
    pub fn charge(
        &self,
        account: &str,
        key_id: &str,
        platform: &str,
        credits: i64,
        request_id: &str,
        now: i64,
    ) -> StoreResult<Charge> {
        self.with(|c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let updated = tx.execute(
                "UPDATE accounts SET balance = balance - ?2 WHERE id = ?1 AND balance >= ?2",
                params![account, credits],
            )?;
            if updated != 1 {
                let balance = tx.query_row("SELECT balance FROM accounts WHERE id = ?1", [account], |r| r.get(0)).optional()?.unwrap_or(0);
                return Ok(Charge::InsufficientCredits { balance });
            }
            tx.execute(
                "INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![account, key_id, platform, credits, request_id, now],
            )?;
            let balance_after = tx.query_row("SELECT balance FROM accounts WHERE id = ?1", [account], |r| r.get(0))?;
            tx.commit()?;
            Ok(Charge::Charged { balance_after })
        })
    }

    /// Sum of credits in the ledger for an account (or all accounts).
    pub fn ledger_sum(&self, account: Option<&str>) -> StoreResult<i64> {
        self.with(|c| {
            Ok(match account {
                Some(a) => c.query_row(
                    "SELECT COALESCE(SUM(credits), 0) FROM ledger WHERE account_id = ?1",
                    [a],
                    |r| r.get(0),
                )?,
                None => c.query_row("SELECT COALESCE(SUM(credits), 0) FROM ledger", [], |r| {
                    r.get(0)
                })?,
            })
        })
    }

    pub fn ledger_count(&self, account: Option<&str>) -> StoreResult<i64> {
        self.with(|c| {
            Ok(match account {
                Some(a) => c.query_row(
                    "SELECT COUNT(*) FROM ledger WHERE account_id = ?1",
                    [a],
                    |r| r.get(0),
                )?,
                None => c.query_row("SELECT COUNT(*) FROM ledger", [], |r| r.get(0))?,
            })
        })
    }
}

/// Open a SQLite file with the service's settings (no migrations).
fn open_sqlite(path: &Path) -> StoreResult<Connection> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| StoreError::Invalid(format!("cannot create {}: {e}", parent.display())))?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: an acknowledged charge or grant survives power loss, not
    // only a process crash (NORMAL may lose the last commits in WAL mode).
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// The schema version of an existing SQLite file, read without changing it.
pub fn sqlite_schema_version(path: &Path) -> StoreResult<u32> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(schema::version(&conn)?)
}

/// PostgreSQL URLs are recognised so they are never mistaken for a file
/// name, but this build has no PostgreSQL backend yet (issue 16).
fn postgres_unavailable(location: &DbLocation) -> StoreError {
    StoreError::Unsupported(format!(
        "PostgreSQL ({location}) is not supported by this build yet; use a SQLite file path"
    ))
}

const KEY_COLUMNS: &str = "id, account_id, name, token_prefix, expires_on, platforms, created_at, rotated_at, rate_limit_per_minute";

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
    })
}
