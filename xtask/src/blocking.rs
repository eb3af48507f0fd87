//! `cargo xtask blocking`: where the host holds a blocking thread.
//!
//! The store answers async callers itself (its `<call>_async` methods), so
//! `tokio::task::spawn_blocking` (or a runtime handle's `spawn_blocking`)
//! under `host/src`, and in the host's layers split out of it into crates
//! ([`CRATES`]), is allowed only in the files listed in [`ALLOWED`], each
//! with the reason it blocks: work that is not a store call. A file not
//! listed that names it fails the check, and so does a listed file that no
//! longer does (the list stays the truth). Comments do not count.

use std::path::Path;

use crate::Result;
use crate::layers::{code_only_keeping_tests, relative, rust_files};

/// The host's crates checked beside `host/src` (`host/<name>/src`): the
/// layers above the store, which answer async callers through the store's
/// `_async` calls like the modules left in `host/src`. The store itself is
/// where a blocking call belongs and is not checked.
pub const CRATES: &[&str] = &[
    "alerts",
    "auth",
    "authoring",
    "billing",
    "call",
    "canary",
    "http",
    "jobs",
    "operator",
    "parse",
    "reload",
    "tunnel",
    "webhooks",
];

/// The files that may hold a blocking thread, and why: relative to
/// `host/src`, or to `host/` for a file of one of [`CRATES`]
/// (`auth/src/…`).
pub const ALLOWED: &[(&str, &str)] = &[
    (
        "auth/src/password_pool.rs",
        "argon2id hashing and checking: CPU work, bounded by the pool's permits",
    ),
    (
        "authoring/src/failures.rs",
        "writes a failing parse's exchanges to disk as a fixture case",
    ),
    ("http/src/health.rs", "lists the kept failure files on disk"),
    (
        "http/src/server.rs",
        "loads the extractors folder at start: reads and compiles WebAssembly",
    ),
    (
        "http/src/console/admin.rs",
        "re-scans the extractors folder (reads and compiles WebAssembly) and lists kept failure files on disk",
    ),
    (
        "billing/src/settle_tests.rs",
        "a test that takes the runtime's only blocking thread on purpose",
    ),
];

pub fn run(root: &Path) -> Result {
    let found = files_blocking(root)?;
    for (file, why) in ALLOWED {
        if found.iter().any(|f| f == file) {
            println!("{file}: {why}");
        }
    }
    let problems = problems(&found);
    for p in &problems {
        println!("{p}");
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} place(s) hold a blocking thread outside the allowed list",
            problems.len()
        ))
    }
}

/// The files under `host/src` (relative to it) and under the [`CRATES`]'
/// sources (relative to `host/`) whose code names `spawn_blocking`.
pub fn files_blocking(root: &Path) -> Result<Vec<String>> {
    let host = root.join("host");
    let mut out = blocking_in(&host.join("src"), &host.join("src"))?;
    for name in CRATES {
        out.extend(blocking_in(&host.join(name).join("src"), &host)?);
    }
    Ok(out)
}

/// The files under `dir` (named relative to `base`) whose code names
/// `spawn_blocking`.
fn blocking_in(dir: &Path, base: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for file in rust_files(dir)? {
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if code_only_keeping_tests(&text).contains("spawn_blocking") {
            out.push(relative(base, &file));
        }
    }
    Ok(out)
}

/// What is wrong with `found` against [`ALLOWED`].
pub fn problems(found: &[String]) -> Vec<String> {
    let mut out: Vec<String> = found
        .iter()
        .filter(|f| !ALLOWED.iter().any(|(a, _)| a == f))
        .map(|f| {
            format!(
                "{f}: spawn_blocking outside the allowed list (await the store's `_async` call)"
            )
        })
        .collect();
    for (file, _) in ALLOWED {
        if !found.iter().any(|f| f == file) {
            out.push(format!(
                "{file}: listed as allowed to block but no longer does: drop it from the list"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::crate_layers;

    #[test]
    fn the_host_blocks_only_where_the_list_allows() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let found = files_blocking(&root).unwrap();
        assert_eq!(problems(&found), Vec::<String>::new());
    }

    /// A name in [`CRATES`] is a crate the host re-exports
    /// (`pub use mediaparse_<name> as <name>;`) with its sources in
    /// `host/<name>/src`, so none is checked in name only.
    #[test]
    fn every_checked_crate_is_one_of_the_hosts_crates() {
        let host = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host");
        let lib = std::fs::read_to_string(host.join("src/lib.rs")).unwrap();
        let crates = crate_layers(&code_only_keeping_tests(&lib));
        for name in CRATES {
            assert!(
                crates.contains(*name),
                "{name} is not re-exported in lib.rs"
            );
            assert!(
                host.join(name).join("src/lib.rs").is_file(),
                "host/{name}/src/lib.rs is missing"
            );
        }
    }

    #[test]
    fn an_unlisted_file_and_a_stale_entry_are_both_problems() {
        let mut found: Vec<String> = ALLOWED.iter().map(|(f, _)| f.to_string()).collect();
        found.push("jobs/src/runner.rs".into());
        found.retain(|f| f != "http/src/health.rs");
        let problems = problems(&found);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("jobs/src/runner.rs: "));
        assert!(problems[1].starts_with("http/src/health.rs: "));
    }
}
