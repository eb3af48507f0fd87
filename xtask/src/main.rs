//! `cargo xtask <command>`: the project's workflow in one place, std only so
//! it builds in a second.
//!
//! - `build-extractors`  every `extractors/<platform>` crate → `target/extractors/<platform>.wasm`
//! - `serve [ARGS…]`     build, then `mediaparse serve` on the embedded defaults
//! - `test [ARGS…]`      build the components, the test guests and the host once, then `cargo test --workspace`
//! - `demo`              a fake upstream loaded with every fixture, the service pointed at it, a key, a curl line

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const WASM_TARGET: &str = "wasm32-wasip2";
const GUEST_PROFILE: &str = "extractor";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r.to_vec()),
        None => ("help", Vec::new()),
    };
    let result = match cmd {
        "build-extractors" => build_extractors().map(|_| ()),
        "serve" => serve(&rest),
        "test" => test(&rest),
        "demo" => demo(),
        _ => {
            eprintln!("usage: cargo xtask <build-extractors | serve [ARGS] | test [ARGS] | demo>");
            return if cmd == "help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {cmd}: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn run(mut cmd: Command) -> Result {
    let shown = format!("{cmd:?}");
    let status = cmd.status().map_err(|e| format!("{shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed with {status}"))
    }
}

/// Platforms with a crate under `extractors/` (adding a folder is enough).
fn platforms() -> Result<Vec<String>> {
    let mut out: Vec<String> = std::fs::read_dir(root().join("extractors"))
        .map_err(|e| format!("reading extractors/: {e}"))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    Ok(out)
}

fn extractors_out() -> PathBuf {
    root().join("target").join("extractors")
}

/// Make sure the wasm target is installed (a no-op when it is).
fn ensure_wasm_target() -> Result {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match installed {
        Ok(out)
            if String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.trim() == WASM_TARGET) =>
        {
            Ok(())
        }
        Ok(_) => {
            let mut c = Command::new("rustup");
            c.args(["target", "add", WASM_TARGET]);
            run(c)
        }
        // No rustup: trust the toolchain to have the target; cargo will say if not.
        Err(_) => Ok(()),
    }
}

fn build_extractors() -> Result<Vec<PathBuf>> {
    ensure_wasm_target()?;
    let platforms = platforms()?;
    let mut c = cargo();
    c.args(["build", "--target", WASM_TARGET, "--profile", GUEST_PROFILE]);
    for p in &platforms {
        c.args(["-p", &format!("mediaparse-extractor-{p}")]);
    }
    run(c)?;
    let out_dir = extractors_out();
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let mut built = Vec::new();
    for p in &platforms {
        let from = root()
            .join("target")
            .join(WASM_TARGET)
            .join(GUEST_PROFILE)
            .join(format!("mediaparse_extractor_{p}.wasm"));
        let to = out_dir.join(format!("{p}.wasm"));
        // Write to a temporary name and rename, so a running service never reads half a file.
        let tmp = out_dir.join(format!(".{p}.wasm.tmp"));
        std::fs::copy(&from, &tmp).map_err(|e| format!("copying {}: {e}", from.display()))?;
        std::fs::rename(&tmp, &to).map_err(|e| e.to_string())?;
        let size = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
        eprintln!("  {p:<12} {:>8} bytes  {}", size, to.display());
        built.push(to);
    }
    Ok(built)
}

/// Test-only components (`tests/guests/<name>`) → `target/test-guests/<name>.wasm`.
/// Kept out of `extractors/` so they are never bundled with the service.
fn build_test_guests() -> Result<PathBuf> {
    let dir = root().join("tests").join("guests");
    let mut guests: Vec<(String, String)> = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("reading tests/guests: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let Ok(manifest) = std::fs::read_to_string(path.join("Cargo.toml")) else {
            continue;
        };
        let package = manifest
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_string())
            .ok_or_else(|| format!("{}: no package name", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        guests.push((name, package));
    }
    let out_dir = root().join("target").join("test-guests");
    if guests.is_empty() {
        return Ok(out_dir);
    }
    let mut c = cargo();
    c.args(["build", "--target", WASM_TARGET, "--profile", GUEST_PROFILE]);
    for (_, package) in &guests {
        c.args(["-p", package]);
    }
    run(c)?;
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    for (name, package) in &guests {
        let from = root()
            .join("target")
            .join(WASM_TARGET)
            .join(GUEST_PROFILE)
            .join(format!("{}.wasm", package.replace('-', "_")));
        let to = out_dir.join(format!("{name}.wasm"));
        std::fs::copy(&from, &to).map_err(|e| format!("copying {}: {e}", from.display()))?;
    }
    Ok(out_dir)
}

fn build_host() -> Result<PathBuf> {
    let mut c = cargo();
    c.args(["build", "-p", "mediaparse", "--bin", "mediaparse"]);
    run(c)?;
    Ok(root().join("target").join("debug").join("mediaparse"))
}

fn serve(args: &[String]) -> Result {
    build_extractors()?;
    let mut c = cargo();
    c.args([
        "run",
        "-p",
        "mediaparse",
        "--bin",
        "mediaparse",
        "--",
        "serve",
        "--extractors",
    ])
    .arg(extractors_out())
    .args(args);
    run(c)
}

fn test(args: &[String]) -> Result {
    build_extractors()?;
    let guests = build_test_guests()?;
    let bin = build_host()?;
    let mut c = cargo();
    c.args(["test", "--workspace"]).args(args);
    c.env("MEDIAPARSE_BIN", bin)
        .env("MEDIAPARSE_EXTRACTORS", extractors_out())
        .env("MEDIAPARSE_TEST_GUESTS", guests);
    run(c)
}

fn demo() -> Result {
    build_extractors()?;
    let bin = build_host()?;
    let mut c = cargo();
    c.args(["run", "-p", "mediaparse-tests", "--bin", "mediaparse-demo"]);
    c.env("MEDIAPARSE_BIN", bin)
        .env("MEDIAPARSE_EXTRACTORS", extractors_out());
    run(c)
}
