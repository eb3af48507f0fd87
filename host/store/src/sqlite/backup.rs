//! `mediaparse backup --to FILE`: a consistent online copy of a SQLite
//! database (SQLite's backup API, so the service keeps serving), checked
//! (`PRAGMA integrity_check`) and moved into place only when complete; the
//! backup file is the owner's only (mode 0600).
//!
//! SQLite restarts an online backup whenever another connection writes, so
//! on a busy database the stepped copy may never end. It gets a bounded
//! time ([`ONLINE_BUDGET`]); if it has not finished by then, one final pass
//! copies everything inside one read transaction (a shared lock on one
//! snapshot: no write can restart it, and in WAL mode writers go on), which
//! always ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::backup::BackupSummary;
use crate::{StoreError, StoreResult, schema};

/// How long the stepped online copy may take before the final locked pass.
pub const ONLINE_BUDGET: Duration = Duration::from_secs(10);

/// Pages copied per online step, and the pause between steps (the service's
/// writers get the lock in between).
const STEP_PAGES: i32 = 256;
const STEP_PAUSE: Duration = Duration::from_millis(2);

/// How long the final pass retries a busy step before giving up.
const LOCKED_PASS_PATIENCE: Duration = Duration::from_secs(5);

/// Copy the database at `source` to the new file `dest`.
pub fn backup_sqlite(source: &Path, dest: &Path) -> StoreResult<BackupSummary> {
    backup_sqlite_within(source, dest, ONLINE_BUDGET)
}

/// [`backup_sqlite`] with the online copy's time bound `online_budget`.
pub fn backup_sqlite_within(
    source: &Path,
    dest: &Path,
    online_budget: Duration,
) -> StoreResult<BackupSummary> {
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
    schema::sqlite::check_not_newer(&src)?;

    let partial = partial_path(dest);
    let _ = std::fs::remove_file(&partial);
    let result = copy_and_check(&src, &partial, online_budget);
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

fn copy_and_check(
    src: &Connection,
    partial: &Path,
    online_budget: Duration,
) -> StoreResult<BackupSummary> {
    mediaparse_core::private_file::create_private(partial)
        .map_err(|e| StoreError::Invalid(format!("cannot create {}: {e}", partial.display())))?;
    let mut dst = Connection::open(partial)?;
    if !copy_online(src, &mut dst, online_budget)? {
        copy_locked(src, &mut dst)?;
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

/// Step the online backup until it is done (`true`) or `budget` is spent (`false`).
fn copy_online(src: &Connection, dst: &mut Connection, budget: Duration) -> StoreResult<bool> {
    use rusqlite::backup::{Backup, StepResult};
    let started = Instant::now();
    let backup = Backup::new(src, dst)?;
    loop {
        match backup.step(STEP_PAGES)? {
            StepResult::Done => return Ok(true),
            StepResult::More | StepResult::Busy | StepResult::Locked => {}
            // A step result added by a later SQLite: keep stepping.
            _ => {}
        }
        if started.elapsed() >= budget {
            return Ok(false);
        }
        std::thread::sleep(STEP_PAUSE);
    }
}

/// Copy the whole database in one step inside one read transaction on the
/// source: its shared lock pins one snapshot, so no writer can restart the
/// copy (in WAL mode writers go on meanwhile; nothing waits for a writer,
/// so a database that is never quiet cannot starve it).
fn copy_locked(src: &Connection, dst: &mut Connection) -> StoreResult<()> {
    use rusqlite::backup::{Backup, StepResult};
    src.execute_batch("BEGIN DEFERRED")?;
    // The first read takes the shared lock and fixes the snapshot.
    let copied = src
        .query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| {
            r.get::<_, i64>(0)
        })
        .and_then(|_| Backup::new(src, dst))
        .and_then(|backup| {
            // A busy answer (the destination, a checkpoint finishing) is transient.
            let started = Instant::now();
            loop {
                match backup.step(-1)? {
                    StepResult::Done => return Ok(None),
                    other if started.elapsed() >= LOCKED_PASS_PATIENCE => {
                        return Ok(Some(other));
                    }
                    _ => std::thread::sleep(STEP_PAUSE),
                }
            }
        });
    // Nothing was written: ending the transaction only releases the lock.
    let released = src.execute_batch("ROLLBACK");
    if let Some(other) = copied? {
        return Err(StoreError::Invalid(format!(
            "the locked backup pass did not finish: {other:?}"
        )));
    }
    released?;
    Ok(())
}

/// The totals an operator compares after a backup or a restore.
pub(crate) fn summarize(conn: &Connection) -> StoreResult<BackupSummary> {
    let one = |sql: &str| -> StoreResult<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    Ok(BackupSummary {
        schema_version: schema::sqlite::version(conn)?,
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
