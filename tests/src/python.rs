//! The outside judges written in Python — the official MCP SDK (`mcp`) and
//! `schemathesis` — installed from PyPI into a venv under `target/` by the
//! tests themselves (pinned versions; reused while the pins are unchanged).
//! `cargo xtask test` starts the same install while it compiles, so the
//! tests usually find the venv ready.
//!
//! Only when Python or pip itself is missing do the tests skip, loudly; a
//! failing `pip install` fails the test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use crate::paths;

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

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| paths::workspace_root().join("target"))
}

/// The venv's `python`, installing the pinned tools first if needed.
/// `None` (with a loud message) only when Python or pip is unavailable.
pub fn venv_python() -> Option<PathBuf> {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let venv = target_dir().join("pytools");
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
        eprintln!(
            "\n\n*** SKIPPED: no python3 with pip on this machine; the MCP client and schemathesis tests did not run ***\n\n"
        );
        return None;
    };
    let status = Command::new(system)
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .expect("running python -m venv");
    if !status.success() || !python.is_file() {
        eprintln!(
            "\n\n*** SKIPPED: `{system} -m venv` does not work here (pip without venv); the MCP client and schemathesis tests did not run ***\n\n"
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
