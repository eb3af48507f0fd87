//! The read-only look of `mediaparse diagnose` at a PostgreSQL database
//! (`probe`), in a read-only transaction.

use super::Connector;
use crate::probe::{NEWEST_RECORD, Probe};
use crate::{StoreError, StoreResult};

/// Look at the database at `url` without changing it.
pub(crate) fn probe(url: &str) -> StoreResult<Probe> {
    let mut client = Connector::from_url(url)?
        .connect()
        .map_err(StoreError::from)?;
    // A read-only transaction: the probe cannot write even by mistake.
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .map_err(StoreError::from)?;
    let schema_version = super::schema_version(&mut tx)?;
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
    Ok(Probe {
        backend: "postgres",
        schema_version,
        supported_version: super::MIGRATIONS.len() as u32,
        newest_record_s,
        server_clock_ms: Some(server_clock_ms as i64),
    })
}
