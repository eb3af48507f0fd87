//! `mediaparse diagnose`: the real binary checks a setup as `serve` would
//! meet it, one line (or JSON object) per check, exit 1 on any failure, and
//! changes nothing.

use std::path::Path;
use std::process::Command;

use mediaparse_tests::paths;
use serde_json::Value;

/// `mediaparse --db <db> diagnose --json ARGS…` on the bundled extractors:
/// (exit code, the checks).
fn diagnose(db: &Path, args: &[&str]) -> (i32, Vec<Value>) {
    diagnose_with(db, &paths::extractors_dir(), args)
}

/// [`diagnose`] on the extractors of `extractors`.
fn diagnose_with(db: &Path, extractors: &Path, args: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(paths::host_binary())
        .arg("--db")
        .arg(db)
        .args(["diagnose", "--json"])
        .args(args)
        .env("MEDIAPARSE_EXTRACTORS", extractors)
        .env_remove("MEDIAPARSE_CONFIG")
        .env_remove("MEDIAPARSE_PUBLIC_BASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let checks: Vec<Value> = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("--json is not a JSON array ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), checks)
}

fn check<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {checks:#?}"))
}

fn failed(checks: &[Value]) -> Vec<&Value> {
    checks.iter().filter(|c| c["status"] == "fail").collect()
}

/// A database made by `migrate` (mode 0600), the bundled extractors.
fn fresh_db(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("mediaparse.db");
    let (code, out) = mediaparse_tests::service::cli(&db, &["migrate"]).unwrap();
    assert_eq!(code, 0, "{out}");
    db
}

#[test]
fn a_fresh_setup_passes_every_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(dir.path());
    let (code, checks) = diagnose(&db, &[]);
    assert_eq!(failed(&checks), Vec::<&Value>::new());
    assert_eq!(code, 0, "{checks:#?}");
    for name in [
        "config",
        "database",
        "schema",
        "disk",
        "extractors",
        "clock",
    ] {
        assert_eq!(check(&checks, name)["status"], "ok", "{checks:#?}");
    }
    assert_eq!(check(&checks, "permissions database")["status"], "ok");
    assert!(
        check(&checks, "schema")["detail"]
            .as_str()
            .unwrap()
            .contains("current"),
        "{checks:#?}"
    );

    // The text form: one `ok|FAIL|skip  name: detail` line per check.
    let out = Command::new(paths::host_binary())
        .arg("--db")
        .arg(&db)
        .arg("diagnose")
        .env("MEDIAPARSE_EXTRACTORS", paths::extractors_dir())
        .env_remove("MEDIAPARSE_CONFIG")
        .env_remove("MEDIAPARSE_PUBLIC_BASE_URL")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), checks.len(), "{text}");
    for line in text.lines() {
        assert!(
            ["ok    ", "FAIL  ", "skip  "]
                .iter()
                .any(|s| line.starts_with(s)),
            "{line}"
        );
    }
    assert!(text.contains("ok    database: "), "{text}");
}

#[cfg(unix)]
#[test]
fn a_database_others_can_read_fails_the_permissions_check() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(dir.path());
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, checks) = diagnose(&db, &[]);
    assert_eq!(code, 1, "{checks:#?}");
    let perms = check(&checks, "permissions database");
    assert_eq!(perms["status"], "fail", "{checks:#?}");
    assert!(
        perms["detail"].as_str().unwrap().contains("0644"),
        "{perms}"
    );
    assert_eq!(
        failed(&checks).len(),
        1,
        "only that check fails: {checks:#?}"
    );
}

#[test]
fn an_exit_that_accepts_nothing_fails_and_one_that_listens_passes() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(dir.path());
    // A port that was just free: nothing listens on it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let config = dir.path().join("mediaparse.toml");
    std::fs::write(
        &config,
        format!(
            "[[platforms.twitter.exits]]\nlabel = \"dead\"\nurl = \"http://user:secret@{closed}\"\n\
             [[platforms.twitter.exits]]\nlabel = \"live\"\nurl = \"socks5h://{}\"\n",
            open.local_addr().unwrap()
        ),
    )
    .unwrap();
    let (code, checks) = diagnose(&db, &["--config", config.to_str().unwrap()]);
    assert_eq!(code, 1, "{checks:#?}");
    assert_eq!(check(&checks, "exit twitter/dead")["status"], "fail");
    assert_eq!(check(&checks, "exit twitter/live")["status"], "ok");
    assert_eq!(failed(&checks).len(), 1, "{checks:#?}");
    let all = serde_json::to_string(&checks).unwrap();
    assert!(
        !all.contains("secret"),
        "exit URLs are never printed: {all}"
    );
}

#[test]
fn a_public_base_url_without_tunnel_keys_fails() {
    let dir = tempfile::tempdir().unwrap();
    let db = fresh_db(dir.path());
    let (code, checks) = diagnose(&db, &["--public-base-url", "https://media.example"]);
    assert_eq!(code, 1, "{checks:#?}");
    assert_eq!(check(&checks, "tunnel-keys")["status"], "fail");
}

fn entries(dir: &Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    names
}

#[test]
fn diagnose_creates_nothing() {
    // One extractor: with no compiled cache each run compiles what it
    // checks, and what is created does not depend on how many there are.
    let extractors = tempfile::tempdir().unwrap();
    for file in ["douyin.wasm", "douyin.toml"] {
        std::fs::copy(
            paths::extractors_dir().join(file),
            extractors.path().join(file),
        )
        .unwrap();
    }
    // Nothing there yet: neither the database nor the compiled cache is made.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    let cache = dir.path().join("cache");
    let (code, checks) = diagnose_with(
        &db,
        extractors.path(),
        &["--compiled-cache", cache.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{checks:#?}");
    assert_eq!(check(&checks, "database")["status"], "skip");
    assert_eq!(entries(dir.path()), Vec::<std::ffi::OsString>::new());

    // A database at rest: read without leaving WAL or shared-memory files.
    let db = fresh_db(dir.path());
    let before = entries(dir.path());
    let (code, checks) = diagnose_with(&db, extractors.path(), &["--compiled-cache", "off"]);
    assert_eq!(code, 0, "{checks:#?}");
    assert_eq!(check(&checks, "database")["status"], "ok");
    assert_eq!(entries(dir.path()), before, "diagnose left files behind");
}
