//! `cargo xtask <command>`: the project's workflow in one place, std only so
//! it builds in a second.
//!
//! - `build-extractors`  every `extractors/<platform>` crate → `target/extractors/<platform>.wasm` + `<platform>.toml`
//! - `serve [ARGS…]`     build, then `mediaparse serve` on the embedded defaults
//! - `test [ARGS…]`      build the components, the test guests, the host and the tests once, then `cargo test` (all but the bench)
//! - `demo`              a fake upstream loaded with every fixture, the service pointed at it, a key, a curl line
//! - `new-extractor NAME` a new `extractors/NAME` crate from `xtask/template/`
//! - `fake-upstream [ARGS…]` the tests' fake upstream as a server (see tests/src/bin/mediaparse-fake-upstream.rs)
//! - `bench [--quick]`   release host + components, then the benchmark table (and `target/bench/bench.json`)
//! - `layers`            the host's module graph; fails on an import cycle or `AppState` below the HTTP layer
//! - `blocking`          fails on `spawn_blocking` in `host/src` outside the files allowed to block (each with its reason)
//! - `dist`              release host + components → `target/dist/mediaparse-<version>-<target>.tar.gz`

mod blocking;
mod dist;
mod layers;
mod native;
mod system;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const WASM_TARGET: &str = "wasm32-wasip2";
const GUEST_PROFILE: &str = "extractor";
/// Code generation flags for every guest: wasm `simd128` lets byte scans
/// (memchr's substring search, `sdk::html::find`) run vectorised; Wasmtime
/// compiles it to SSE on the host. A 4 MiB initial linear memory (the 1 MiB
/// stack, the data and room for a parse's heap) means an ordinary parse
/// never grows its memory: each growth costs the host's instance pool an
/// `mprotect` and a TLB shootdown on every core when the slot is next used
/// (pages never touched cost nothing). Set per target, so build scripts and
/// proc-macros (host code) are untouched.
const GUEST_RUSTFLAGS: (&str, &str) = (
    "CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS",
    "-C target-feature=+simd128 -C link-arg=--initial-memory=4194304",
);

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
        "new-extractor" => match rest.as_slice() {
            [name] => new_extractor(name),
            _ => Err("usage: cargo xtask new-extractor NAME".into()),
        },
        "fake-upstream" => fake_upstream(&rest),
        "bench" => bench(&rest),
        "layers" => layers::run(&root()),
        "blocking" => blocking::run(&root()),
        "dist" => dist::dist(),
        _ => {
            eprintln!(
                "usage: cargo xtask <build-extractors | serve [ARGS] | test [ARGS] | demo | new-extractor NAME | fake-upstream [ARGS] | bench [--quick] [--json PATH] | layers | blocking | dist>"
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

/// `cargo` set up to build guests: `args` for the wasm target in the guest
/// profile, with the guest code generation flags.
fn guest_cargo(args: &[&str]) -> Command {
    let mut c = cargo();
    c.args(args)
        .args(["--target", WASM_TARGET, "--profile", GUEST_PROFILE])
        .env(GUEST_RUSTFLAGS.0, GUEST_RUSTFLAGS.1);
    c
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    forget_cargo_run_env(&mut c);
    c
}

/// `cargo xtask` runs us through `cargo run`, which sets the package
/// variables (`CARGO_MANIFEST_DIR=…/xtask`, `CARGO_PKG_NAME=xtask`, …).
/// Some build scripts (ring's) declare `rerun-if-env-changed` on exactly
/// those, so a cargo started with them rebuilds ring → rustls → reqwest →
/// the host and every test binary whenever the last build came from a plain
/// shell, and the other way round. Our cargo children get the shell's view.
fn forget_cargo_run_env(c: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            )
        {
            c.env_remove(name);
        }
    }
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
    native::ensure_guest_build_tools()?;
    let platforms = platforms()?;
    let mut c = guest_cargo(&["build"]);
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
        let manifest = platform_toml(p)?;
        // Write to a temporary name and rename, so a running service never
        // reads half a file; the manifest first, so the wasm's arrival finds it.
        install(&manifest, &out_dir.join(format!("{p}.toml")))?;
        let to = out_dir.join(format!("{p}.wasm"));
        install(&from, &to)?;
        let size = std::fs::metadata(&to).map(|m| m.len()).unwrap_or(0);
        eprintln!("  {p:<12} {:>8} bytes  {}", size, to.display());
        built.push(to);
    }
    Ok(built)
}

/// `extractors/<p>/platform.toml`, checked (a broken one fails the build,
/// not the service's reload).
fn platform_toml(platform: &str) -> Result<PathBuf> {
    let path = root()
        .join("extractors")
        .join(platform)
        .join("platform.toml");
    let manifest = mediaparse_catalogue::Manifest::load(&path).map_err(|e| e.to_string())?;
    if manifest.id != platform {
        return Err(format!(
            "{}: id {:?} differs from the folder's name",
            path.display(),
            manifest.id
        ));
    }
    Ok(path)
}

/// Copy `from` to `to` through a hidden temporary name and a rename.
fn install(from: &Path, to: &Path) -> Result {
    let name = to.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let tmp = to.with_file_name(format!(".{name}.tmp"));
    std::fs::copy(from, &tmp).map_err(|e| format!("copying {}: {e}", from.display()))?;
    std::fs::rename(&tmp, to).map_err(|e| e.to_string())
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
    let mut c = guest_cargo(&["build"]);
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
    native::ensure_native_build_tools()?;
    let mut c = cargo();
    c.args(["build", "-p", "mediaparse", "--bin", "mediaparse"]);
    run(c)?;
    Ok(root().join("target").join("debug").join("mediaparse"))
}

fn serve(args: &[String]) -> Result {
    native::ensure_native_build_tools()?;
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

/// What `cargo xtask test` tests: the workspace but the benchmark (its own
/// package so the test run never builds it; CI's clippy still checks it).
const TEST_SELECTION: &[&str] = &["--workspace", "--exclude", "mediaparse-bench"];

fn test(args: &[String]) -> Result {
    native::ensure_native_build_tools()?;
    // Network and unpacking, not compilation: done while the builds run.
    // Every `apt-get` waits its turn (`native::apt_turn`): the guests'
    // build tools and the test programs never contend for dpkg's lock.
    let test_programs = std::thread::spawn(system::ensure_test_programs);
    let python_tools = std::thread::spawn(prepare_python_tools);
    build_extractors()?;
    let guests = build_test_guests()?;
    let bin = build_host_and_tests()?;
    compile_bundled_components(&bin)?;
    check_template(&bin)?;
    // The release layout around the debug binary just built: the end-to-end
    // test unpacks it into an empty folder and starts the service from there.
    let dist_check = dist::pack(&bin, &target_dir().join("dist-check"), "-debug")?;
    test_programs
        .join()
        .unwrap_or_else(|_| Err("installing the test programs panicked".into()))?;
    // The tests install the tools themselves when missing; never both at once.
    let python_tools = python_tools
        .join()
        .unwrap_or_else(|_| Err("the Python tools' install panicked".into()));
    if let Err(e) = python_tools {
        if in_ci() {
            return Err(format!("CI=true: {e}"));
        }
        eprintln!("  python tools: {e}; the tests will try again");
    }
    let skips = target_dir().join(SKIPS_FILE);
    if let Err(e) = std::fs::remove_file(&skips)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        return Err(format!("removing {}: {e}", skips.display()));
    }
    let mut c = cargo();
    c.arg("test").args(TEST_SELECTION).args(args);
    c.env("MEDIAPARSE_BIN", bin)
        .env("MEDIAPARSE_EXTRACTORS", extractors_out())
        .env("MEDIAPARSE_TEST_GUESTS", guests)
        .env("MEDIAPARSE_TEMPLATE_WASM", template_wasm())
        .env("MEDIAPARSE_TEMPLATE_TOML", template_toml())
        .env("MEDIAPARSE_DIST_TARBALL", dist_check);
    let ran = run(c);
    report_skips(&skips);
    ran
}

/// Compile every bundled component once, on all cores, into the cache that
/// the test services and the in-process tests share (`.cwasm-cache` in the
/// extractors folder). Without it the first tests to start, two at a time,
/// would each compile all of them at once. The `detect` it runs also checks
/// that the bundled set loads and routes a URL.
fn compile_bundled_components(host_bin: &Path) -> Result {
    let started = std::time::Instant::now();
    let mut detect = Command::new(host_bin);
    detect
        .args(["detect", "--extractors"])
        .arg(extractors_out())
        .arg("https://www.tiktok.com/@scout2015/video/6718335390845095173")
        .stdout(std::process::Stdio::null());
    run(detect)?;
    eprintln!(
        "  components: compiled into {} in {:.1} s",
        extractors_out().join(".cwasm-cache").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Where the tests record a skip (`mediaparse_tests::skip::SKIPS_FILE`).
const SKIPS_FILE: &str = "test-skips.txt";

/// Whether this run is CI's (`CI=true`): then every failure to provide what
/// the tests need is an error, never a skip.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

/// Print the skips the test run recorded (outside CI a test whose outside
/// program is missing skips; under CI it fails instead), after the run, so
/// no skip hides in a passing test's captured output.
fn report_skips(file: &Path) {
    let skips = std::fs::read_to_string(file).unwrap_or_default();
    let lines: Vec<&str> = skips.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        eprintln!("\nxtask test: no test skipped");
        return;
    }
    eprintln!(
        "\nxtask test: {} test(s) SKIPPED (install what they name and run again):",
        lines.len()
    );
    for line in lines {
        eprintln!("  {line}");
    }
}

/// The venv of Python judges the end-to-end tests use (`mcp`,
/// `schemathesis`), as `tests/src/python.rs` makes it: same folder, same
/// pins (`tests/py/requirements.txt`), same stamp. An error says which step
/// failed (under `CI=true` it stops the run; elsewhere the tests try again).
fn prepare_python_tools() -> Result {
    let venv = target_dir().join("pytools");
    let python = venv.join("bin").join("python");
    let stamp = venv.join(".mediaparse-requirements");
    let requirements = root().join("tests/py/requirements.txt");
    let text = std::fs::read_to_string(&requirements)
        .map_err(|e| format!("reading {}: {e}", requirements.display()))?;
    let pins: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let wanted = pins.join("\n");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    let step = |what: &str, c: &mut Command| -> Result {
        let out = c.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let system = ["python3", "python"]
        .into_iter()
        .find(|p| step("pip", Command::new(p).args(["-m", "pip", "--version"])).is_ok())
        .ok_or("no python3 with pip (Debian: python3, python3-pip)")?;
    step(
        &format!("{system} -m venv {}", venv.display()),
        Command::new(system)
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )?;
    step(
        &format!("pip install {}", pins.join(" ")),
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(&pins),
    )?;
    std::fs::write(&stamp, wanted).map_err(|e| format!("writing {}: {e}", stamp.display()))
}

/// The host binary built with the very features `cargo test` resolves (the
/// whole selection, dev-dependencies on), and every test binary with it, so
/// the test run that follows compiles nothing again. (`cargo build -p
/// mediaparse` alone resolves other dependency features — reqwest without
/// `json`, regex-syntax without unicode — and so built wasmtime, cranelift
/// and the host a second time.)
fn build_host_and_tests() -> Result<PathBuf> {
    native::ensure_native_build_tools()?;
    let mut c = cargo();
    c.arg("build")
        .args(TEST_SELECTION)
        .args(["--bins", "--tests"]);
    run(c)?;
    Ok(root().join("target").join("debug").join("mediaparse"))
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

fn fake_upstream(args: &[String]) -> Result {
    let mut c = cargo();
    c.args([
        "run",
        "--quiet",
        "-p",
        "mediaparse-tests",
        "--bin",
        "mediaparse-fake-upstream",
        "--",
    ])
    .args(args);
    run(c)
}

const TEMPLATE_DIR: &str = "xtask/template";

/// A platform id: lower-case ASCII letters and digits, starting with a letter.
fn valid_name(name: &str) -> bool {
    // At most 16 bytes: mediaparse_catalogue::is_platform_id.
    (2..=16).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// `streamable` → `Streamable`.
fn type_name(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Render `xtask/template/` into `dest` for platform `name`: every `*.in`
/// file, placeholders `{{name}}`, `{{NAME}}`, `{{Type}}`, `{{crate}}` filled.
fn render_template(name: &str, dest: &Path) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "in") {
                out.push(path);
            }
        }
        Ok(())
    }
    let template = root().join(TEMPLATE_DIR);
    let mut files = Vec::new();
    walk(&template, &mut files).map_err(|e| format!("reading {}: {e}", template.display()))?;
    files.sort();
    let mut written = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&template).map_err(|e| e.to_string())?;
        let target = dest.join(rel.with_extension(""));
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let text = text
            .replace("{{name}}", name)
            .replace("{{NAME}}", &name.to_ascii_uppercase())
            .replace("{{Type}}", &type_name(name))
            .replace("{{crate}}", &format!("mediaparse_extractor_{name}"));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&target, text).map_err(|e| format!("{}: {e}", target.display()))?;
        written.push(target);
    }
    Ok(written)
}

fn new_extractor(name: &str) -> Result {
    if !valid_name(name) {
        return Err(format!(
            "{name:?} is not a platform id: use 2-16 lower-case letters and digits, starting with a letter"
        ));
    }
    let dest = root().join("extractors").join(name);
    if dest.exists() {
        return Err(format!("{} exists already", dest.display()));
    }
    let written = render_template(name, &dest)?;
    for f in &written {
        eprintln!(
            "  created {}",
            f.strip_prefix(root()).unwrap_or(f).display()
        );
    }
    eprintln!(
        "\nextractors/{name} is a workspace member and on the build list already (both take every \
         extractors/* folder); its platform.toml (id, name, price, listed members) is what the \
         service learns about it, no host or SDK change needed.\nNext: cargo test -p mediaparse-extractor-{name}, then \
         docs/writing-an-extractor.md."
    );
    Ok(())
}

/// The platform id the template is rendered as by [`check_template`].
const TEMPLATE_CHECK: &str = "templatecheck";

/// Where [`check_template`] renders the template.
fn template_check_dir() -> PathBuf {
    root().join("target").join("template-check")
}

/// The template's example component as [`check_template`] builds it (the
/// drop-in test installs it into a running service).
fn template_wasm() -> PathBuf {
    root()
        .join("target")
        .join(WASM_TARGET)
        .join(GUEST_PROFILE)
        .join(format!("mediaparse_extractor_{TEMPLATE_CHECK}.wasm"))
}

/// Its `platform.toml`.
fn template_toml() -> PathBuf {
    template_check_dir()
        .join("extractors")
        .join(TEMPLATE_CHECK)
        .join("platform.toml")
}

/// CI guard: the template must render, pass its own tests, build as a wasm
/// component and replay its fixture through the host. It is rendered as the
/// only member of a scratch workspace in `target/template-check/` sharing
/// this target directory, so it costs one small crate per run.
fn check_template(host_bin: &Path) -> Result {
    const NAME: &str = TEMPLATE_CHECK;
    let dir = template_check_dir();
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
    }
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).map_err(|e| e.to_string())?;
    let manifest: String = manifest
        .lines()
        .map(|l| {
            if l.starts_with("members") {
                "members = [\"extractors/*\"]".to_string()
            } else if l.starts_with("mediaparse-") && l.contains("path = \"") {
                // Workspace path dependencies (the SDK, the catalogue): absolute.
                l.replacen("path = \"", &format!("path = \"{}/", root().display()), 1)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("Cargo.toml"), manifest + "\n").map_err(|e| e.to_string())?;
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).map_err(|e| e.to_string())?;
    let crate_dir = dir.join("extractors").join(NAME);
    render_template(NAME, &crate_dir)?;
    let package = format!("mediaparse-extractor-{NAME}");
    let scratch = |mut c: Command| {
        c.arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .args(["-p", &package])
            .env("CARGO_TARGET_DIR", root().join("target"));
        c
    };
    let mut test = cargo();
    test.args(["test", "--quiet"]);
    run(scratch(test))?;
    run(scratch(guest_cargo(&["build", "--quiet"])))?;
    let wasm = template_wasm();
    let mut replay = Command::new(host_bin);
    replay
        .arg("replay")
        .arg(crate_dir.join("fixtures").join("post_not_implemented"))
        .arg("--component")
        .arg(&wasm);
    run(replay)?;
    eprintln!("  template: renders, passes its tests, builds and replays as a component");
    Ok(())
}

/// The release host, built together with the bench binary: one package
/// selection resolves one set of dependency features, so `cargo xtask dist`
/// after `cargo xtask bench` (or the other way round) compiles nothing again.
const RELEASE_SELECTION: &[&str] = &[
    "-p",
    "mediaparse",
    "--bin",
    "mediaparse",
    "-p",
    "mediaparse-bench",
    "--bin",
    "mediaparse-bench",
];

/// `target/release/mediaparse` (and `mediaparse-bench`), built.
fn build_release_host() -> Result<PathBuf> {
    native::ensure_native_build_tools()?;
    let mut c = cargo();
    c.args(["build", "--release"]).args(RELEASE_SELECTION);
    run(c)?;
    Ok(target_dir().join("release").join("mediaparse"))
}

/// Benchmarks are only meaningful on a release host: build it, the
/// components, and run the bench binary (also in release) against them.
fn bench(args: &[String]) -> Result {
    build_extractors()?;
    let host = build_release_host()?;
    let release = target_dir().join("release");
    let mut c = Command::new(release.join("mediaparse-bench"));
    c.current_dir(root()).args(args);
    c.env("MEDIAPARSE_BIN", host)
        .env("MEDIAPARSE_EXTRACTORS", extractors_out());
    run(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_platform_ids() {
        assert!(valid_name("streamable"));
        assert!(valid_name("vk2"));
        for bad in ["", "x", "Streamable", "my-site", "9gag", "a b", "../x"] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert_eq!(type_name("streamable"), "Streamable");
    }

    #[test]
    fn the_template_renders_a_valid_platform_toml() {
        let dir = std::env::temp_dir().join(format!("xtask-render-{}", std::process::id()));
        render_template("streamable", &dir).unwrap();
        let m = mediaparse_catalogue::Manifest::load(&dir.join("platform.toml"));
        std::fs::remove_dir_all(&dir).unwrap();
        let m = m.unwrap();
        assert_eq!(
            (m.id.as_str(), m.name.as_str()),
            ("streamable", "Streamable")
        );
    }

    #[test]
    fn every_extractor_has_its_platform_toml() {
        for p in platforms().unwrap() {
            platform_toml(&p).unwrap();
        }
    }
}
