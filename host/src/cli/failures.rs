//! `mediaparse failures list [--platform P] [--json]` and
//! `mediaparse failures export <id> --to DIR`: the failing parses the
//! service kept as fixture cases (`authoring/failures.rs`), read from the
//! folder beside the database the service uses (`--db`).

use std::path::PathBuf;

use clap::Subcommand;

use crate::authoring::failures::{dir_for, export, list};
use crate::core::clock::rfc3339;
use crate::store::DbLocation;

#[derive(Subcommand, Debug)]
pub enum FailuresCommand {
    /// The kept failures, newest first.
    List {
        #[arg(long)]
        platform: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Write one as a fixture case (`case.json` and its bodies) into `--to`;
    /// `mediaparse replay DIR` then reproduces the failure.
    Export {
        id: String,
        #[arg(long)]
        to: PathBuf,
        /// Overwrite an existing `case.json` there.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(db: &DbLocation, command: FailuresCommand) -> anyhow::Result<i32> {
    let dir = dir_for(&db.data_file());
    match command {
        FailuresCommand::List { platform, json } => {
            let kept = list(&dir, platform.as_deref())?;
            if json {
                println!("{}", serde_json::to_string(&kept)?);
                return Ok(0);
            }
            if kept.is_empty() {
                println!("no kept failures in {}", dir.display());
            }
            for f in &kept {
                println!(
                    "{}  {}  {}  {}  {} exchanges  {}",
                    f.id,
                    rfc3339(f.at_unix_s),
                    f.platform,
                    f.code,
                    f.exchanges,
                    f.input
                );
            }
            Ok(0)
        }
        FailuresCommand::Export { id, to, force } => {
            let out = export(&dir, &id, &to, force)?;
            println!(
                "exported {id} into {}; reproduce it with: mediaparse replay {}",
                out.display(),
                out.display()
            );
            Ok(0)
        }
    }
}
