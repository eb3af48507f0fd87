//! The books' totals ([`BackupSummary`]): what a backup or a copy to
//! PostgreSQL must reproduce, and what `Store::summary` reads on either
//! backend (`sqlite/backup.rs`, `pg/backup.rs`). The online backup itself is
//! SQLite's (`sqlite/backup.rs`).

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
