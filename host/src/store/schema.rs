//! Schema migrations, applied in order and recorded in `PRAGMA user_version`.

use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: accounts, keys, ledger, credit grants
    "CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        balance INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
        created_at INTEGER NOT NULL
     );
     CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        token_hash BLOB NOT NULL UNIQUE,
        token_prefix TEXT NOT NULL,
        expires_on TEXT,
        platforms TEXT,
        created_at INTEGER NOT NULL,
        rotated_at INTEGER
     );
     CREATE TABLE ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        key_id TEXT NOT NULL,
        platform TEXT NOT NULL,
        credits INTEGER NOT NULL CHECK (credits > 0),
        request_id TEXT NOT NULL,
        created_at INTEGER NOT NULL
     );
     CREATE INDEX ledger_by_account ON ledger (account_id, created_at);
     CREATE INDEX ledger_by_key ON ledger (key_id, created_at);
     CREATE TABLE credit_grants (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        credits INTEGER NOT NULL,
        created_at INTEGER NOT NULL
     );",
];

pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let current: usize =
        conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        conn.execute_batch(&format!(
            "BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;",
            i + 1
        ))?;
    }
    Ok(())
}
