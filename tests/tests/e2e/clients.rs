//! The client libraries' own suites — `clients/python` (pytest, in a venv
//! under `target/`) and `clients/typescript` (`npm test`: the types generated
//! from `docs/openapi.json`, tsc, `node --test`) — each against its own real
//! service in demo mode: the built binary, every fixture behind the fake
//! upstream, a key with credits and a key allowed 20 parses a minute.

use std::path::{Path, PathBuf};
use std::process::Command;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use mediaparse_tests::{paths, skip};

/// A demo-mode service and what the suites are told about it.
struct Demo {
    _upstream: FakeUpstream,
    service: Service,
    env: Vec<(&'static str, String)>,
}

async fn demo() -> Demo {
    let mut cases = Vec::new();
    for (_, dir) in paths::fixture_dirs() {
        cases.extend(Case::load_all(&dir).expect("fixture cases"));
    }
    let photo = Case::load(
        &paths::workspace_root()
            .join("extractors/tiktok/fixtures")
            .join("photo_post"),
    )
    .expect("the tiktok photo case");
    let upstream = FakeUpstream::start(&cases).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1000).unwrap();
    let token = service.create_key(&[]).unwrap();
    let limited = service.create_key(&["--rate-limit", "20"]).unwrap();
    let env = vec![
        ("MEDIAPARSE_BASE_URL", service.base_url.clone()),
        ("MEDIAPARSE_TOKEN", token),
        ("MEDIAPARSE_LIMITED_TOKEN", limited),
        ("MEDIAPARSE_PARSE_URL", photo.input.clone()),
    ];
    Demo {
        _upstream: upstream,
        service,
        env,
    }
}

/// Run `c` to the end; its output, or a panic with it.
fn run(mut c: Command, what: &str) -> String {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

fn works(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `clients/python` installed (editable, with its test extra) into
/// `target/pyclient`, reinstalled when its pyproject.toml changes.
fn python_client_venv(test: &str) -> Option<PathBuf> {
    let package = paths::workspace_root().join("clients/python");
    let venv = paths::target_dir().join("pyclient");
    let python = venv.join("bin/python");
    let stamp = venv.join(".mediaparse-pyproject");
    let wanted = std::fs::read_to_string(package.join("pyproject.toml")).unwrap();
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Some(python);
    }
    if !works("python3", &["-c", "import ensurepip, venv"]) {
        skip::missing(test, "python3 with venv (Debian: python3, python3-venv)");
        return None;
    }
    let mut venv_cmd = Command::new("python3");
    venv_cmd.args(["-m", "venv", "--clear"]).arg(&venv);
    run(venv_cmd, "python3 -m venv");
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-e",
    ])
    .arg(format!("{}[test]", package.display()));
    run(pip, "pip install -e clients/python[test]");
    std::fs::write(&stamp, wanted).unwrap();
    Some(python)
}

fn with_env(c: &mut Command, demo: &Demo) {
    for (k, v) in &demo.env {
        c.env(k, v);
    }
}

#[tokio::test]
async fn the_python_client_suite_passes_against_the_demo_service() {
    const TEST: &str = "clients::the_python_client_suite_passes_against_the_demo_service";
    let Some(python) = python_client_venv(TEST) else {
        return;
    };
    let demo = demo().await;
    let dir = paths::workspace_root().join("clients/python");
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(&dir);
    with_env(&mut pytest, &demo);
    let out = tokio::task::spawn_blocking(move || run(pytest, "pytest clients/python"))
        .await
        .unwrap();
    eprintln!("{out}");
    assert!(out.contains(" passed"), "pytest ran tests: {out}");
    drop(demo.service);
}

/// `npm ci` when `node_modules` is missing or older than the lock file.
fn npm_ci(dir: &Path) {
    let lock = std::fs::read_to_string(dir.join("package-lock.json")).unwrap();
    let stamp = dir.join("node_modules/.mediaparse-lock");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == lock) {
        return;
    }
    let mut ci = Command::new("npm");
    ci.args(["ci", "--no-audit", "--no-fund"]).current_dir(dir);
    run(ci, "npm ci (clients/typescript)");
    std::fs::write(&stamp, lock).unwrap();
}

#[tokio::test]
async fn the_typescript_client_suite_passes_against_the_demo_service() {
    const TEST: &str = "clients::the_typescript_client_suite_passes_against_the_demo_service";
    if !works("node", &["--version"]) || !works("npm", &["--version"]) {
        skip::missing(TEST, "node and npm (Debian: nodejs, npm)");
        return;
    }
    let dir = paths::workspace_root().join("clients/typescript");
    npm_ci(&dir);
    let demo = demo().await;
    let mut npm = Command::new("npm");
    npm.args(["test", "--silent"]).current_dir(&dir);
    with_env(&mut npm, &demo);
    let out = tokio::task::spawn_blocking(move || run(npm, "npm test (clients/typescript)"))
        .await
        .unwrap();
    eprintln!("{out}");
    assert!(out.contains("# fail 0"), "node --test ran clean: {out}");
    assert!(!out.contains("# pass 0"), "node --test ran tests: {out}");
    drop(demo.service);
}
