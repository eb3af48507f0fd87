//! The SQLite backend: one file in WAL mode, one write connection (shared
//! by the writer thread that group-commits the parse path's writes and by
//! the other writers), read-only connections for reports. The files beside
//! this one hold the SQLite body of each `Store` method, by subject, named
//! as the PostgreSQL ones under `pg/`.

pub(crate) mod accounts;
pub(crate) mod backup;
pub(crate) mod canaries;
pub(crate) mod daily;
pub(crate) mod delivery;
pub(crate) mod holds;
pub(crate) mod idempotency;
pub(crate) mod jobs;
pub(crate) mod keys;
pub(crate) mod probe;
pub(crate) mod rate_buckets;
pub(crate) mod report;
pub(crate) mod sessions;
pub(crate) mod tunnel_usage;
pub(crate) mod usage;
pub(crate) mod usage_daily;
pub(crate) mod users;
pub(crate) mod webhooks;
pub(crate) mod writer;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::key_cache::KeyCache;
use crate::{StoreError, StoreResult};

/// Read-only connections for reports beside the one writer.
const SQLITE_READERS: usize = 2;

/// One write connection behind a mutex (SQLite serializes writers anyway),
/// shared by the writer thread, which commits the parse path's writes in
/// groups, and by the other writers (admin, console), which keep their own
/// transactions; and read-only connections for reports (usage, the
/// console's pages, tunnel traffic): in WAL mode they read the last
/// committed state without waiting for the writer, so a long report never
/// holds up a charge.
pub(crate) struct Sqlite {
    pub(crate) writer: Arc<Mutex<Connection>>,
    pub(crate) queue: writer::WriterThread,
    pub(crate) readers: Vec<Mutex<Connection>>,
    pub(crate) next_reader: std::sync::atomic::AtomicUsize,
}

impl Sqlite {
    /// Open (creating if needed) and migrate the database file, and start
    /// its writer thread, which keeps `keys` in step with its commits.
    pub(crate) fn open(path: &Path, keys: Arc<KeyCache>) -> StoreResult<Sqlite> {
        let conn = open_sqlite(path)?;
        crate::schema::sqlite::migrate(&conn)?;
        // An in-memory database is private to its connection: no readers.
        let in_memory = path.as_os_str().is_empty() || path == Path::new(":memory:");
        let readers = if in_memory {
            Vec::new()
        } else {
            (0..SQLITE_READERS)
                .map(|_| open_sqlite_reader(path).map(Mutex::new))
                .collect::<StoreResult<_>>()?
        };
        let writer = Arc::new(Mutex::new(conn));
        let queue = writer::WriterThread::start(writer.clone(), keys)?;
        Ok(Sqlite {
            writer,
            queue,
            readers,
            next_reader: Default::default(),
        })
    }
}

/// Open a SQLite file with the service's settings (no migrations).
pub(crate) fn open_sqlite(path: &Path) -> StoreResult<Connection> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| StoreError::Invalid(format!("cannot create {}: {e}", parent.display())))?;
    }
    // A new database file is the owner's only (its WAL and shared-memory
    // files take the database file's mode).
    if !path.as_os_str().is_empty() && path != Path::new(":memory:") {
        mediaparse_core::private_file::create_private(path)
            .map_err(|e| StoreError::Invalid(format!("cannot create {}: {e}", path.display())))?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: an acknowledged charge or grant survives power loss, not
    // only a process crash (NORMAL may lose the last commits in WAL mode).
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}

/// How long a connection waits for a lock another process holds.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A read-only connection to a migrated file (WAL mode is the file's).
fn open_sqlite_reader(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// A connection's lock. A poisoned lock only means another thread panicked
/// mid-call; SQLite rolled its transaction back, so the connection is sound.
pub(crate) fn lock(conn: &Mutex<Connection>) -> std::sync::MutexGuard<'_, Connection> {
    conn.lock().unwrap_or_else(|p| p.into_inner())
}
