//! `--db` locations, `mediaparse migrate` and `mediaparse backup`, through
//! the real binary.

use std::path::Path;
use std::process::{Command, Output};

use mediaparse_tests::paths;
use mediaparse_tests::service::cli;
use serde_json::Value;

/// Run the binary with `--db <db>` in `cwd`.
fn run_in(cwd: &Path, db: &str, args: &[&str]) -> Output {
    Command::new(paths::host_binary())
        .current_dir(cwd)
        .arg("--db")
        .arg(db)
        .args(args)
        .env("MEDIAPARSE_EXTRACTORS", paths::extractors_dir())
        .output()
        .unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_url_db_is_never_taken_for_a_file_name() {
    let dir = tempfile::tempdir().unwrap();
    for (db, says) in [
        (
            "mysql://127.0.0.1/m",
            "unsupported database scheme `mysql:`",
        ),
        ("sqlite://m.db", "unsupported database scheme `sqlite:`"),
        ("postgres://u:pw@127.0.0.1/m", "PostgreSQL"),
    ] {
        for args in [
            &["accounts", "list"][..],
            &["serve", "--listen", "127.0.0.1:0"][..],
        ] {
            let out = run_in(dir.path(), db, args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{db} {args:?} was accepted");
            assert!(stderr.contains(says), "{db} {args:?}: {stderr}");
            assert!(
                !stderr.contains(":pw@"),
                "the password is never printed: {stderr}"
            );
        }
    }
    assert_eq!(
        entries(dir.path()),
        Vec::<String>::new(),
        "nothing was created"
    );
}

#[test]
fn migrate_reports_the_schema_version_and_backup_copies_the_books() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let (code, out) = cli(&db, &["migrate", "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let migrated: Value = serde_json::from_str(out.trim()).unwrap();
    let version = migrated["to"].as_u64().unwrap();
    assert!(version >= 2 && migrated["from"] == 0, "{migrated}");
    let (code, out) = cli(&db, &["migrate"]).unwrap();
    assert_eq!(code, 0);
    assert!(out.contains("up to date"), "{out}");

    let (code, out) = cli(&db, &["credits", "add", "--account", "acme", "120"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let backup = dir.path().join("backup.db");
    let backup_arg = backup.to_str().unwrap();
    let (code, out) = cli(&db, &["backup", "--to", backup_arg, "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let summary: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(summary["balanceTotal"], 120, "{summary}");
    assert_eq!(summary["grantedTotal"], 120, "{summary}");
    assert_eq!(summary["schemaVersion"], version, "{summary}");

    // The backup is a working database with the same books.
    let (code, out) = cli(&backup, &["credits", "show", "--account", "acme", "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("120"), "{out}");
    // A second backup to the same file is refused; the first stays.
    let (code, _) = cli(&db, &["backup", "--to", backup_arg]).unwrap();
    assert_ne!(code, 0);
    // A database from a newer binary is refused, by serve too.
    set_user_version(&db, version as u32 + 1);
    let out = run_in(
        dir.path(),
        db.to_str().unwrap(),
        &["serve", "--listen", "127.0.0.1:0"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("newer than this binary"), "{stderr}");
}

/// Write SQLite's `user_version` (big-endian u32 at offset 60 of the file
/// header) the way a newer binary's migration would leave it.
fn set_user_version(db: &Path, version: u32) {
    use std::io::{Seek, SeekFrom, Write};
    assert!(
        !db.with_extension("db-wal").exists(),
        "the WAL was checkpointed"
    );
    let mut file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    file.seek(SeekFrom::Start(60)).unwrap();
    file.write_all(&version.to_be_bytes()).unwrap();
}
