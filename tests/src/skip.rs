//! What a test does when an outside program it needs (Python with pip and
//! venv, Chromium, ...) is missing. Under `CI=true` it fails: CI installs
//! everything (`cargo xtask test`), so a missing program there is a broken
//! machine, not a reason to pass. Elsewhere the test returns early, and the
//! skip is appended to [`SKIPS_FILE`] under the target folder, which
//! `cargo xtask test` empties before the run and prints after it, so a skip
//! is never hidden in the captured output of a passing test.

use std::io::Write;
use std::path::PathBuf;

use crate::paths;

/// The file skips are recorded in, one line each (read by xtask).
pub const SKIPS_FILE: &str = "test-skips.txt";

/// Whether this run is CI's (`CI=true`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Where skips are recorded: `<target>/test-skips.txt`.
pub fn skips_file() -> PathBuf {
    paths::target_dir().join(SKIPS_FILE)
}

/// `test` cannot run because `missing` is not installed: panics under
/// `CI=true`, otherwise records the skip (the caller then returns).
pub fn missing(test: &str, missing: &str) {
    assert!(
        !in_ci(),
        "CI=true: {test} needs {missing}, which is missing (`cargo xtask test` installs it)"
    );
    let line = format!("{test}: skipped, {missing} is missing\n");
    eprintln!("\n*** SKIPPED {line}");
    let path = skips_file();
    let recorded = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = recorded {
        panic!(
            "{test} would skip ({missing} is missing) but cannot record it in {}: {e}",
            path.display()
        );
    }
}
