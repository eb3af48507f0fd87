//! A read-only look at the database for `mediaparse diagnose`: whether it
//! answers, its schema version, the newest time it recorded and (on
//! PostgreSQL) the server's clock. Nothing is created or migrated.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::{DbLocation, StoreError, StoreResult, pg, schema};

/// What a read-only look at the database found.
#[derive(Clone, Debug)]
pub struct Probe {
    pub backend: &'static str,
    pub schema_version: u32,
    /// The version this binary writes for this backend.
    pub supported_version: u32,
    /// The newest `created_at` (Unix seconds) among accounts, keys and
    /// charges; `None` when nothing was recorded yet.
    pub newest_record_s: Option<i64>,
    /// The database server's clock in Unix milliseconds (PostgreSQL only).
    pub server_clock_ms: Option<i64>,
}

/// Open the database read-only (`None`: a SQLite file that does not exist yet).
pub fn probe(location: &DbLocation) -> StoreResult<Option<Probe>> {
    match location {
        DbLocation::Sqlite(path) if !path.exists() => Ok(None),
        DbLocation::Sqlite(path) => {
            let conn = open_read_only(path)?;
            let schema_version = schema::sqlite::version(&conn)?;
            let newest_record_s = if schema_version == 0 {
                None
            } else {
                conn.query_row(NEWEST_RECORD, [], |r| r.get(0))?
            };
            Ok(Some(Probe {
                backend: "sqlite",
                schema_version,
                supported_version: schema::SCHEMA_VERSION,
                newest_record_s,
                server_clock_ms: None,
            }))
        }
        DbLocation::Postgres(url) => {
            let mut client = pg::Connector::from_url(url)?
                .connect()
                .map_err(StoreError::from)?;
            // A read-only transaction: the probe cannot write even by mistake.
            let mut tx = client
                .build_transaction()
                .read_only(true)
                .start()
                .map_err(StoreError::from)?;
            let schema_version = pg::schema_version(&mut tx)?;
            let newest_record_s = if schema_version == 0 {
                None
            } else {
                tx.query_one(NEWEST_RECORD, &[])
                    .map_err(StoreError::from)?
                    .get::<_, Option<i64>>(0)
            };
            let server_clock_ms: f64 = tx
                .query_one(
                    "SELECT extract(epoch FROM clock_timestamp())::float8 * 1000",
                    &[],
                )
                .map_err(StoreError::from)?
                .get(0);
            Ok(Some(Probe {
                backend: "postgres",
                schema_version,
                supported_version: pg::MIGRATIONS.len() as u32,
                newest_record_s,
                server_clock_ms: Some(server_clock_ms as i64),
            }))
        }
    }
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

/// The same text for SQLite and PostgreSQL (`created_at` is seconds in both).
const NEWEST_RECORD: &str = "SELECT MAX(t) FROM (
    SELECT MAX(created_at) AS t FROM accounts
    UNION ALL SELECT MAX(created_at) FROM api_keys
    UNION ALL SELECT MAX(created_at) FROM ledger) AS newest";
