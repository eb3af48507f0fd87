//! The read-only look of `mediaparse diagnose` at a SQLite file (`probe`).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::probe::{NEWEST_RECORD, Probe};
use crate::{StoreError, StoreResult, schema};

/// Look at the existing file `path` without changing it.
pub(crate) fn probe(path: &Path) -> StoreResult<Probe> {
    let conn = open_read_only(path)?;
    let schema_version = schema::sqlite::version(&conn)?;
    let newest_record_s = if schema_version == 0 {
        None
    } else {
        conn.query_row(NEWEST_RECORD, [], |r| r.get(0))?
    };
    Ok(Probe {
        backend: "sqlite",
        schema_version,
        supported_version: schema::SCHEMA_VERSION,
        newest_record_s,
        server_clock_ms: None,
    })
}

/// A read-only connection that leaves no file behind. Even read-only,
/// SQLite creates the `-wal` and `-shm` files of a WAL database that has
/// none; without a `-wal` file everything is in the main file, so it is
/// opened `immutable` (no locks, no side files). With one (a service is
/// running, or stopped uncleanly), the WAL holds committed pages the main
/// file lacks, and the files already there are used as they are.
fn open_read_only(path: &Path) -> StoreResult<Connection> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if Path::new(&wal).exists() {
        return Ok(Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY,
        )?);
    }
    let absolute = std::path::absolute(path)
        .map_err(|e| StoreError::Invalid(format!("{}: {e}", path.display())))?;
    let mut uri = url::Url::from_file_path(&absolute)
        .map_err(|()| StoreError::Invalid(format!("{} is not a file path", path.display())))?;
    uri.set_query(Some("immutable=1"));
    Ok(Connection::open_with_flags(
        uri.as_str(),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )?)
}
