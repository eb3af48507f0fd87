//! `mediaparse migrate` and `mediaparse backup`: the database's own upkeep.

use std::path::PathBuf;

use clap::Args;

use crate::store::{self, DbLocation, Store};

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The new file to write (refused if it exists).
    #[arg(long)]
    pub to: PathBuf,
    /// Print the backup's totals as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Apply missing migrations (opening the store does) and say what changed.
pub fn migrate(db: &DbLocation, args: MigrateArgs) -> anyhow::Result<i32> {
    let before = match db {
        DbLocation::Sqlite(path) if path.exists() => Some(store::sqlite_schema_version(path)?),
        _ => None,
    };
    let store = Store::connect(db)?;
    let after = store.schema_version()?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({"database": db.to_string(), "from": before.unwrap_or(0), "to": after})
        );
    } else if before == Some(after) {
        println!("{db}: schema version {after}, up to date");
    } else {
        println!("{db}: schema version {} -> {after}", before.unwrap_or(0));
    }
    Ok(0)
}

/// Copy the live SQLite database into `--to` and print the copy's totals.
pub fn backup(db: &DbLocation, args: BackupArgs) -> anyhow::Result<i32> {
    let DbLocation::Sqlite(source) = db else {
        anyhow::bail!("backup copies a SQLite database; back up PostgreSQL with pg_dump");
    };
    let summary = store::backup_sqlite(source, &args.to)?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        println!(
            "backed up {} to {}: schema {}, {} accounts (balance {}), {} keys, {} ledger rows ({} credits), {} credits granted",
            source.display(),
            args.to.display(),
            summary.schema_version,
            summary.accounts,
            summary.balance_total,
            summary.keys,
            summary.ledger_rows,
            summary.ledger_total,
            summary.granted_total,
        );
    }
    Ok(0)
}
