//! The release tarball as an operator gets it: unpacked into an empty
//! folder, its own binary started from there with a clean environment and a
//! working directory outside the source tree, serving a real parse and
//! `/healthz`; then the container image built from the same tarball.
//!
//! `cargo xtask test` packs the tarball (`MEDIAPARSE_DIST_TARBALL`) in the
//! release layout around the debug binary it built (`cargo xtask dist` packs
//! the release binary the same way).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::{paths, skip};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The tarball `cargo xtask test` packed, or `None` (recorded skip; under
/// `CI=true` a failure) when the tests run without it.
fn tarball(test: &str) -> Option<PathBuf> {
    match std::env::var_os("MEDIAPARSE_DIST_TARBALL") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(p.is_file(), "{} is missing", p.display());
            Some(p)
        }
        None => {
            skip::missing(
                test,
                "MEDIAPARSE_DIST_TARBALL (run through `cargo xtask test`, which packs it)",
            );
            None
        }
    }
}

/// `tar -xzf` into `dir`; the one folder it made.
fn unpack(tarball: &Path, dir: &Path) -> PathBuf {
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("running tar");
    assert!(status.success(), "tar -xzf {} failed", tarball.display());
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "one top folder: {entries:?}");
    entries.into_iter().next().unwrap()
}

fn tiktok_photo() -> Case {
    Case::load(
        &paths::workspace_root()
            .join("extractors/tiktok/fixtures")
            .join("photo_post"),
    )
    .expect("fixture case")
}

/// The unpacked binary with nothing inherited: no environment, no cwd in
/// the source tree.
fn unpacked(bin: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear().current_dir(cwd).stdin(Stdio::null());
    c
}

fn cli_json(bin: &Path, cwd: &Path, args: &[&str]) -> Value {
    let out = unpacked(bin, cwd)
        .args(args)
        .output()
        .expect("running the CLI");
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Poll `url` until it answers 200, at most `within`.
async fn wait_healthy(client: &reqwest::Client, url: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(r) = client.get(url).send().await
            && r.status() == 200
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{url} did not answer 200 within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn the_tarball_serves_a_parse_from_an_empty_folder() {
    let Some(tarball) = tarball("dist::the_tarball_serves_a_parse_from_an_empty_folder") else {
        return;
    };
    let install = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let root = unpack(&tarball, install.path());
    for file in [
        "bin/mediaparse",
        "etc/mediaparse.toml",
        "systemd/mediaparse.service",
        "INSTALL.md",
    ] {
        assert!(root.join(file).is_file(), "{file} in the tarball");
    }
    // Every bundled extractor, as the service loads them.
    let catalogue = paths::bundled_catalogue();
    for id in catalogue.ids() {
        for ext in ["wasm", "toml"] {
            assert!(
                root.join("extractors")
                    .join(format!("{id}.{ext}"))
                    .is_file(),
                "extractors/{id}.{ext} in the tarball"
            );
        }
    }
    let bin = root.join("bin/mediaparse");
    let db = work.path().join("mediaparse.db");
    let db = db.to_str().unwrap();
    let key = cli_json(
        &bin,
        work.path(),
        &["--db", db, "keys", "create", "--name", "dist", "--json"],
    );
    let token = key["token"].as_str().expect("a token").to_string();
    cli_json(
        &bin,
        work.path(),
        &["--db", db, "credits", "add", "--account", "default", "5"],
    );

    let photo = tiktok_photo();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    // No --extractors: the service finds them beside its bin/ folder.
    let mut child = tokio::process::Command::from(unpacked(&bin, work.path()));
    child
        .args([
            "--db",
            db,
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--test-mode",
        ])
        .arg("--fixed-clock-ms")
        .arg(mediaparse_tests::service::FIXED_CLOCK_MS.to_string())
        .arg("--upstream")
        .arg(upstream.base_url())
        .arg("--config")
        .arg(root.join("etc/mediaparse.toml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = child.spawn().expect("starting the unpacked service");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(300), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("listening on ") {
                return url.trim().to_string();
            }
        }
        panic!("the unpacked service exited before listening")
    })
    .await
    .expect("the unpacked service listens within 300 s");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let client = reqwest::Client::new();
    let health = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "/healthz");
    let resp = client
        .post(format!("{base}/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({ "url": photo.input }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "a parse through the unpacked service");
    let body: Value = resp.json().await.unwrap();
    let images = body["data"]["images"].as_array().expect("data.images");
    assert!(!images.is_empty(), "the photo post's images: {body}");
    // The compiled components went into the unpacked extractors folder.
    assert!(root.join("extractors/.cwasm-cache").is_dir());
    assert!(
        upstream.requests() > 0,
        "the parse went to the fake upstream"
    );
}

/// The image's base: Debian 12 minbase made here with debootstrap (no image
/// registry is reachable from the test machines) and trimmed as the
/// `-slim` images are; made once per machine and kept in podman's store.
const BASE_IMAGE: &str = "localhost/mediaparse-base:bookworm-slim";

/// `podman` with what these machines need (they are containers
/// themselves; see dist/INSTALL.md): runc with the cgroupfs manager.
fn podman() -> Command {
    let mut c = Command::new("podman");
    c.args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"])
        .stdin(Stdio::null());
    c
}

fn must(mut c: Command, what: &str) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn ensure_base_image() {
    let exists = podman()
        .args(["image", "exists", BASE_IMAGE])
        .status()
        .is_ok_and(|s| s.success());
    if exists {
        return;
    }
    let dir = tempfile::tempdir_in(paths::target_dir()).unwrap();
    let rootfs = dir.path().join("rootfs");
    let mut debootstrap = Command::new("debootstrap");
    debootstrap
        .args(["--variant=minbase", "bookworm"])
        .arg(&rootfs);
    must(debootstrap, "debootstrap --variant=minbase bookworm");
    for trimmed in [
        "var/cache/apt/archives",
        "var/lib/apt/lists",
        "usr/share/doc",
        "usr/share/locale",
        "usr/share/man",
        "usr/share/info",
    ] {
        let path = rootfs.join(trimmed);
        std::fs::remove_dir_all(&path).unwrap();
        std::fs::create_dir_all(&path).unwrap();
    }
    let archive = dir.path().join("rootfs.tar");
    let mut tar = Command::new("tar");
    tar.arg("-C")
        .arg(&rootfs)
        .args(["-cf"])
        .arg(&archive)
        .arg(".");
    must(tar, "tar of the rootfs");
    let mut import = podman();
    import.args(["import", "-q"]).arg(&archive).arg(BASE_IMAGE);
    must(import, "podman import");
}

/// A free loopback port (bound, read, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Removes the container and the image however the test ends.
struct Cleanup {
    container: Option<String>,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(id) = &self.container {
            let _ = podman().args(["rm", "-f", id]).output();
        }
        let _ = podman().args(["rmi", "-f", &self.image]).output();
    }
}

#[tokio::test]
async fn the_image_built_from_the_tarball_answers_healthz() {
    const TEST: &str = "dist::the_image_built_from_the_tarball_answers_healthz";
    let Some(tarball) = tarball(TEST) else {
        return;
    };
    let works = Command::new("podman")
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        skip::missing(TEST, "a working podman (Debian: podman, runc, debootstrap)");
        return;
    }
    ensure_base_image();
    // The build context: the tarball alone.
    let context = tempfile::tempdir_in(paths::target_dir()).unwrap();
    let name = tarball.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::copy(&tarball, context.path().join(&name)).unwrap();
    let image = format!("localhost/mediaparse-dist-check:{}", std::process::id());
    let mut cleanup = Cleanup {
        container: None,
        image: image.clone(),
    };
    let mut build = podman();
    build
        .args(["build", "-q", "--isolation", "chroot"])
        .args(["--build-arg", &format!("BASE={BASE_IMAGE}")])
        .args(["--build-arg", &format!("TARBALL={name}")])
        .arg("-f")
        .arg(paths::workspace_root().join("dist/Containerfile"))
        .args(["-t", &image])
        .arg(context.path());
    must(build, "podman build");
    let size: u64 = must(
        {
            let mut c = podman();
            c.args(["image", "inspect", "--format", "{{.Size}}", &image]);
            c
        },
        "podman image inspect",
    )
    .parse()
    .expect("an image size");
    eprintln!(
        "image {image}: {:.1} MiB (tarball {name})",
        size as f64 / (1024.0 * 1024.0)
    );

    let port = free_port();
    let mut run = podman();
    run.args(["run", "-d", "--network", "host"])
        .args([
            "--ulimit",
            "nofile=4096:4096",
            "--ulimit",
            "nproc=4096:4096",
        ])
        .args(["-e", &format!("MEDIAPARSE_LISTEN=127.0.0.1:{port}")])
        .arg(&image);
    let id = must(run, "podman run");
    cleanup.container = Some(id.clone());
    let client = reqwest::Client::new();
    wait_healthy(
        &client,
        &format!("http://127.0.0.1:{port}/healthz"),
        Duration::from_secs(300),
    )
    .await;
    let health: Value = client
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        health["extractors"].as_u64(),
        Some(paths::bundled_catalogue().ids().len() as u64),
        "every bundled extractor loaded in the container: {health}"
    );
    // Not root inside the container.
    let mut id_cmd = podman();
    id_cmd.args(["exec", &id, "id", "-u"]);
    assert_eq!(must(id_cmd, "podman exec id -u"), "10001");
    drop(cleanup);
}
