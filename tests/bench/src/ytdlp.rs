//! yt-dlp beside the service, in the same run: CPU per parse of its TikTok
//! extractor on the very page the end-to-end section serves.
//!
//! yt-dlp is installed from PyPI, pinned, into its own virtual environment
//! under `target/bench-ytdlp`; `py/ytdlp_cpu.py` hands the extractor the saved
//! page in place of its download, so only extraction CPU is timed.

use std::path::{Path, PathBuf};
use std::process::Command;

use mediaparse_tests::paths;
use serde_json::Value;

/// The yt-dlp release compared against (newest in the registry when pinned).
pub const PIN: &str = "yt-dlp==2026.10.26";

/// What yt-dlp measured.
pub struct YtDlp {
    pub version: String,
    pub cpu_us_per_parse: f64,
    pub runs: u64,
}

fn venv_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| paths::workspace_root().join("target"))
        .join("bench-ytdlp")
}

fn succeeded(c: &mut Command) -> anyhow::Result<()> {
    let out = c.output()?;
    if !out.status.success() {
        anyhow::bail!(
            "{c:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The venv's python with [`PIN`] installed (created once; the stamp holds the pin).
fn python() -> anyhow::Result<PathBuf> {
    let venv = venv_dir();
    let python = venv.join("bin").join("python");
    let stamp = venv.join(".mediaparse-pin");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == PIN) {
        return Ok(python);
    }
    eprintln!("  installing {PIN} into {}", venv.display());
    succeeded(
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )
    .map_err(|e| anyhow::anyhow!("yt-dlp comparison needs python3 with venv: {e}"))?;
    succeeded(Command::new(&python).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        PIN,
    ]))?;
    std::fs::write(&stamp, PIN)?;
    Ok(python)
}

/// yt-dlp's median CPU per extraction of `page` (the HTML file) for `url`.
pub fn cpu_per_parse(page: &Path, url: &str, quick: bool) -> anyhow::Result<YtDlp> {
    let python = python()?;
    let script = paths::workspace_root().join("tests/bench/py/ytdlp_cpu.py");
    let (runs, budget) = if quick { ("10", "0.5") } else { ("30", "3") };
    let out = Command::new(python)
        .arg(script)
        .arg(page)
        .args([url, runs, budget])
        .output()?;
    if !out.status.success() {
        anyhow::bail!(
            "yt-dlp extraction failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout)?;
    Ok(YtDlp {
        version: v["version"].as_str().unwrap_or_default().to_string(),
        cpu_us_per_parse: v["cpu_us_median"]
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("yt-dlp script printed no cpu_us_median"))?,
        runs: v["runs"].as_u64().unwrap_or(0),
    })
}

/// CPU seconds (user + system) the process `pid` has used so far.
pub fn process_cpu_s(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start after ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5): 12 and 13 after ')'.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks_per_s())
}

fn clock_ticks_per_s() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}
