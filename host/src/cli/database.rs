//! `mediaparse migrate` and `mediaparse backup`: the database's own upkeep.

use std::path::PathBuf;

use clap::Args;

use crate::store::{self, DbLocation, Store};

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Copy the books of this SQLite file (with `--to`) instead of migrating `--db`.
    #[arg(long, requires = "to")]
    pub from: Option<PathBuf>,
    /// The empty PostgreSQL database (`postgres://…`) to copy `--from` into.
    #[arg(long, requires = "from")]
    pub to: Option<DbLocation>,
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
    if let (Some(from), Some(to)) = (&args.from, &args.to) {
        return copy(from, to, args.json);
    }
    let before = store::existing_schema_version(db)?;
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

/// `migrate --from FILE.db --to postgres://…`: copy and verify the books.
fn copy(from: &std::path::Path, to: &DbLocation, json: bool) -> anyhow::Result<i32> {
    let DbLocation::Postgres(url) = to else {
        anyhow::bail!("--to takes a postgres:// URL (the SQLite file goes in --from)");
    };
    let summary = store::copy_sqlite_to_postgres(from, url)?;
    if json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        let c = &summary.copied;
        println!(
            "copied {} to {to} and verified: schema {}, {} accounts (balance {}), {} keys, {} ledger rows ({} credits), {} credits granted",
            from.display(),
            c.schema_version,
            c.accounts,
            c.balance_total,
            c.keys,
            c.ledger_rows,
            c.ledger_total,
            c.granted_total,
        );
    }
    Ok(0)
}
