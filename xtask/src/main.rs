//! `cargo xtask <command>`: the project's workflow in one place, std only so
//! it builds in a second.
//!
//! - `build-extractors`  every `extractors/<platform>` crate → `target/extractors/<platform>.wasm`
//! - `serve [ARGS…]`     build, then `mediaparse serve` on the embedded defaults
//! - `test [ARGS…]`      build the components and the host once, then `cargo test --workspace`
//! - `demo`              a fake upstream loaded with every fixture, the service pointed at it, a key, a curl line
//! - `bench [--quick]`   release host + components, then the benchmark table (and `target/bench/bench.json`)

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
        "bench" => bench(&rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <build-extractors | serve [ARGS] | test [ARGS] | demo | bench [--quick] [--json PATH]>"
            );
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
    let bin = build_host()?;
    let mut c = cargo();
    c.args(["test", "--workspace"]).args(args);
    c.env("MEDIAPARSE_BIN", bin)
        .env("MEDIAPARSE_EXTRACTORS", extractors_out());
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

/// Benchmarks are only meaningful on a release host: build it, the
/// components, and run the bench binary (also in release) against them.
fn bench(args: &[String]) -> Result {
    build_extractors()?;
    let mut c = cargo();
    c.args([
        "build",
        "--release",
        "-p",
        "mediaparse",
        "--bin",
        "mediaparse",
        "-p",
        "mediaparse-tests",
        "--bin",
        "mediaparse-bench",
    ]);
    run(c)?;
    let release = root().join("target").join("release");
    let mut c = Command::new(release.join("mediaparse-bench"));
    c.current_dir(root()).args(args);
    c.env("MEDIAPARSE_BIN", release.join("mediaparse"))
        .env("MEDIAPARSE_EXTRACTORS", extractors_out());
    run(c)
}
