//! Test knobs only in test mode: without `--test-mode`,
//! `serve` refuses to start while a test knob is set (naming it); test mode
//! refuses a non-loopback listen address. The harness (`Service::start`)
//! passes `--test-mode`, so every other end-to-end test proves the knobs
//! still work in it.

use std::process::Command;

use mediaparse_tests::paths;

/// Run `serve` with `args` and `env` until it exits (a refusal) or 20 s
/// pass (it started: killed); its exit code (None: it was serving) and stderr.
fn serve(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(paths::host_binary());
    cmd.arg("--db")
        .arg(dir.path().join("db.sqlite"))
        .arg("serve")
        .arg("--extractors")
        .arg(paths::extractors_dir())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    for var in [
        "MEDIAPARSE_UPSTREAM",
        "MEDIAPARSE_TEST_MODE",
        "MEDIAPARSE_FIXED_CLOCK_MS",
        "MEDIAPARSE_FIXED_AUTH_CLOCK",
        "MEDIAPARSE_UPSTREAM_TIMEOUT_MS",
        "MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    (None, String::new())
}

#[test]
fn test_knobs_are_refused_outside_test_mode() {
    let (code, err) = serve(
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            "http://127.0.0.1:9",
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--upstream") && err.contains("--test-mode"),
        "{err}"
    );
    let (code, err) = serve(&["--listen", "127.0.0.1:0", "--fixed-clock-ms", "1"], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--fixed-clock-ms"), "{err}");
    for var in [
        "MEDIAPARSE_FIXED_AUTH_CLOCK",
        "MEDIAPARSE_UPSTREAM_TIMEOUT_MS",
        "MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES",
        "MEDIAPARSE_UPSTREAM",
    ] {
        let value = if var == "MEDIAPARSE_UPSTREAM" {
            "http://127.0.0.1:9"
        } else {
            "400"
        };
        let (code, err) = serve(&["--listen", "127.0.0.1:0"], &[(var, value)]);
        assert_eq!(code, Some(2), "{var}: {err}");
        assert!(err.contains("test knobs"), "{var}: {err}");
    }
}

#[test]
fn test_mode_listens_on_loopback_only() {
    for listen in ["0.0.0.0:0", "[::]:0"] {
        let (code, err) = serve(&["--test-mode", "--listen", listen], &[]);
        assert_eq!(code, Some(2), "{listen}: {err}");
        assert!(err.contains("loopback"), "{err}");
        let (code, err) = serve(&["--listen", listen], &[("MEDIAPARSE_TEST_MODE", "1")]);
        assert_eq!(code, Some(2), "{listen} (env): {err}");
    }
}
