//! The outside judges written in Python — the official MCP SDK (`mcp`) and
//! `schemathesis` — installed from PyPI into a venv under `target/` by the
//! tests themselves (pinned versions; reused while the pins are unchanged).
//! `cargo xtask test` starts the same install while it compiles, so the
//! tests usually find the venv ready.
//!
//! When Python, pip or venv itself is missing the tests fail under
//! `CI=true` and elsewhere skip, recorded for xtask's summary
//! ([`crate::skip`]); a failing `pip install` always fails the test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use crate::{paths, skip};

/// What the venv holds, one pin a line; changing a pin reinstalls. (xtask
/// reads the same file and writes the same stamp.)
pub const REQUIREMENTS_TXT: &str = include_str!("../py/requirements.txt");

fn requirements() -> Vec<&'static str> {
    REQUIREMENTS_TXT
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

static LOCK: Mutex<()> = Mutex::new(());

/// The venv's `python`, installing the pinned tools first if needed.
/// `None` only outside CI when Python, pip or venv is unavailable: the skip
/// of `test` is then recorded ([`skip::missing`]); under `CI=true` it panics.
pub fn venv_python(test: &str) -> Option<PathBuf> {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let venv = paths::target_dir().join("pytools");
    let python = venv.join("bin/python");
    let stamp = venv.join(".mediaparse-requirements");
    let requirements = requirements();
    let wanted = requirements.join("\n");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Some(python);
    }
    let system = ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .args(["-m", "pip", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(system) = system else {
        skip::missing(test, "python3 with pip (Debian: python3, python3-pip)");
        return None;
    };
    let status = Command::new(system)
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .expect("running python -m venv");
    if !status.success() || !python.is_file() {
        skip::missing(
            test,
            &format!("a working `{system} -m venv` (Debian: python3-venv)"),
        );
        return None;
    }
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(&requirements)
        .output()
        .expect("running pip install");
    assert!(
        out.status.success(),
        "pip install {} failed:\n{}{}",
        requirements.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&stamp, wanted).expect("writing the venv stamp");
    Some(python)
}

/// A script in `tests/py/`.
pub fn script(name: &str) -> PathBuf {
    paths::workspace_root().join("tests/py").join(name)
}
