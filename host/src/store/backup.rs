//! `mediaparse backup --to FILE`: a consistent online copy of a SQLite
//! database (SQLite's backup API, so the service keeps serving), checked
//! (`PRAGMA integrity_check`) and moved into place only when complete.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::{StoreError, StoreResult, schema};

/// What a backup holds, for comparing with the live books.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackupSummary {
    pub schema_version: u32,
    pub accounts: i64,
    pub balance_total: i64,
    pub keys: i64,
    pub ledger_rows: i64,
    pub ledger_total: i64,
    pub granted_total: i64,
}

/// Copy the database at `source` to the new file `dest`.
pub fn backup_sqlite(source: &Path, dest: &Path) -> StoreResult<BackupSummary> {
    if dest.exists() {
        return Err(StoreError::Invalid(format!(
            "{} already exists; back up to a new file",
            dest.display()
        )));
    }
    // Never create (or migrate) the source: a typo must not back up an empty file.
    let src = Connection::open_with_flags(
        source,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::Invalid(format!("cannot open {}: {e}", source.display())))?;
    src.busy_timeout(Duration::from_secs(5))?;
    schema::check_not_newer(&src)?;

    let partial = partial_path(dest);
    let _ = std::fs::remove_file(&partial);
    let result = copy_and_check(&src, &partial);
    match result {
        Ok(summary) => {
            std::fs::rename(&partial, dest).map_err(|e| {
                StoreError::Invalid(format!("cannot move the backup to {}: {e}", dest.display()))
            })?;
            Ok(summary)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

fn copy_and_check(src: &Connection, partial: &Path) -> StoreResult<BackupSummary> {
    let mut dst = Connection::open(partial)?;
    {
        let backup = rusqlite::backup::Backup::new(src, &mut dst)?;
        // Small steps with a pause: the service's writers get the lock in between.
        backup.run_to_completion(256, Duration::from_millis(2), None)?;
    }
    let check: String = dst.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if check != "ok" {
        return Err(StoreError::Invalid(format!(
            "the backup failed its integrity check: {check}"
        )));
    }
    let summary = summarize(&dst)?;
    // Fold the WAL into the file so the backup is one self-contained file.
    dst.pragma_update(None, "journal_mode", "DELETE")?;
    dst.close().map_err(|(_, e)| StoreError::Sqlite(e))?;
    std::fs::File::open(partial)
        .and_then(|f| f.sync_all())
        .map_err(|e| StoreError::Invalid(format!("cannot sync {}: {e}", partial.display())))?;
    Ok(summary)
}

/// The totals an operator compares after a backup or a restore.
pub fn summarize(conn: &Connection) -> StoreResult<BackupSummary> {
    let one = |sql: &str| -> StoreResult<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    Ok(BackupSummary {
        schema_version: schema::version(conn)?,
        accounts: one("SELECT COUNT(*) FROM accounts")?,
        balance_total: one("SELECT COALESCE(SUM(balance), 0) FROM accounts")?,
        keys: one("SELECT COUNT(*) FROM api_keys")?,
        ledger_rows: one("SELECT COUNT(*) FROM ledger")?,
        ledger_total: one("SELECT COALESCE(SUM(credits), 0) FROM ledger")?,
        granted_total: one("SELECT COALESCE(SUM(credits), 0) FROM credit_grants")?,
    })
}

fn partial_path(dest: &Path) -> PathBuf {
    let mut name = dest.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}
