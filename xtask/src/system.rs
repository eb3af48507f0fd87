//! Debian packages the test suite runs as real processes. Installed with
//! `apt-get` when xtask runs as root (and says so); otherwise the run stops
//! with the exact command. Never a silent skip: a test that needs a missing
//! program would fail anyway, with less to go on.

use std::path::Path;
use std::process::Command;

use super::Result;

/// How to tell a package's program is there.
enum Present {
    /// This file in one of the usual `bin` folders.
    Program(&'static str),
    /// This command (found on `PATH`) runs and succeeds.
    Works(&'static [&'static str]),
}

/// (what to check, Debian package, why the tests need it).
const TEST_PROGRAMS: &[(Present, &str, &str)] = &[
    (
        Present::Program("tinyproxy"),
        "tinyproxy",
        "HTTP proxy for the egress tests",
    ),
    (
        Present::Program("danted"),
        "dante-server",
        "SOCKS5 proxy for the egress tests",
    ),
    (
        Present::Program("ffmpeg"),
        "ffmpeg",
        "makes the tunnel tests' media and runs the tunnel's merge",
    ),
    (
        Present::Program("ffprobe"),
        "ffmpeg",
        "checks the streams of the tunnel's merged MP4",
    ),
    (
        Present::Program("chromium"),
        "chromium",
        "headless browser for the console tests",
    ),
    (
        Present::Program("chromedriver"),
        "chromium-driver",
        "WebDriver for the console tests' browser",
    ),
    (
        Present::Program("initdb"),
        "postgresql",
        "PostgreSQL server for the store and cluster tests",
    ),
    (
        Present::Program("podman"),
        "podman",
        "builds the container image from the release tarball and runs it",
    ),
    (
        Present::Program("runc"),
        "runc",
        "podman's runtime on machines whose cgroup layout crun refuses",
    ),
    (
        Present::Program("debootstrap"),
        "debootstrap",
        "makes the image's Debian base where no image registry is reachable",
    ),
    (
        Present::Works(&["node", "--version"]),
        "nodejs",
        "runs the TypeScript client's suite",
    ),
    (
        Present::Works(&["npm", "--version"]),
        "npm",
        "installs the TypeScript client's build tools (typescript, openapi-typescript)",
    ),
    (
        Present::Works(&["python3", "--version"]),
        "python3",
        "runs the official MCP client, schemathesis and the Python client's suite",
    ),
    (
        Present::Works(&["python3", "-m", "pip", "--version"]),
        "python3-pip",
        "installs the MCP client and schemathesis",
    ),
    (
        Present::Works(&["python3", "-c", "import ensurepip, venv"]),
        "python3-venv",
        "the venv the MCP client and schemathesis are installed into",
    ),
];

impl Present {
    fn check(&self) -> bool {
        match self {
            Present::Program(program) => installed(program),
            Present::Works([program, args @ ..]) => Command::new(program)
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success()),
            Present::Works([]) => true,
        }
    }
}

fn installed(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).is_file())
        || postgres_bin_dirs().any(|d| d.join(program).is_file())
}

/// Debian keeps the PostgreSQL server programs in /usr/lib/postgresql/<major>/bin.
fn postgres_bin_dirs() -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Make sure every program of [`TEST_PROGRAMS`] is there.
pub fn ensure_test_programs() -> Result {
    let _turn = crate::native::apt_turn();
    let missing: Vec<&(Present, &str, &str)> = TEST_PROGRAMS
        .iter()
        .filter(|(present, ..)| !present.check())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut packages: Vec<&str> = missing.iter().map(|(_, p, _)| *p).collect();
    // ffmpeg and ffprobe come from one package.
    packages.dedup();
    let command = format!(
        "apt-get install -y --no-install-recommends {}",
        packages.join(" ")
    );
    if !is_root() {
        return Err(format!(
            "the tests need {} ({}); run: sudo {command}",
            packages.join(", "),
            missing
                .iter()
                .map(|(_, _, why)| *why)
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    for (_, package, why) in &missing {
        eprintln!("xtask: installing Debian package {package} ({why})");
    }
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(&packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    // A fresh machine may have no package lists yet.
    let done = install()
        || (Command::new("apt-get")
            .arg("update")
            .status()
            .is_ok_and(|s| s.success())
            && install());
    if done && missing.iter().all(|(present, ..)| present.check()) {
        Ok(())
    } else {
        Err(format!(
            "installing {} failed; run: {command}",
            packages.join(", ")
        ))
    }
}
