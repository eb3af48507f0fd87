//! A real `mediaparse serve` process on a loopback port, with its own
//! SQLite file, pointed at a fake upstream; killed when dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::paths;

/// The clock extractors see in end-to-end runs (the fixtures' default).
pub const FIXED_CLOCK_MS: u64 = mediaparse_sdk::fixture::DEFAULT_NOW_MS;

pub struct Service {
    pub base_url: String,
    pub db: PathBuf,
    child: Child,
    _dir: Option<tempfile::TempDir>,
}

#[derive(Clone, Debug, Default)]
pub struct ServiceOptions {
    pub upstream: Option<String>,
    /// Reuse this database file instead of a fresh temporary one.
    pub db: Option<PathBuf>,
    pub extractors: Option<PathBuf>,
    /// Operator configuration file (`--config`).
    pub config: Option<PathBuf>,
    /// Operator token for the admin API.
    pub admin_token: Option<String>,
    /// Listen address (default `127.0.0.1:0`, a free port).
    pub listen: Option<String>,
    pub extra_env: Vec<(String, String)>,
    /// Write the service's log (stderr) to this file instead of inheriting it.
    pub log_file: Option<PathBuf>,
    /// Extra arguments after `serve` (e.g. `--compiled-cache DIR`).
    pub extra_args: Vec<String>,
}

impl Service {
    pub async fn start(options: ServiceOptions) -> anyhow::Result<Service> {
        let (dir, db) = match &options.db {
            Some(db) => (None, db.clone()),
            None => {
                let dir = tempfile::tempdir()?;
                let db = dir.path().join("mediaparse.db");
                (Some(dir), db)
            }
        };
        let mut cmd = Command::new(paths::host_binary());
        cmd.arg("--db")
            .arg(&db)
            .arg("serve")
            .arg("--listen")
            .arg(options.listen.as_deref().unwrap_or("127.0.0.1:0"));
        cmd.arg("--extractors").arg(
            options
                .extractors
                .clone()
                .unwrap_or_else(paths::extractors_dir),
        );
        // The tests' knobs (fixed clocks, the upstream override, limits)
        // are honoured only in test mode, on loopback.
        cmd.arg("--test-mode");
        cmd.arg("--fixed-clock-ms").arg(FIXED_CLOCK_MS.to_string());
        // Only what the options say reaches the child.
        for var in [
            "MEDIAPARSE_UPSTREAM",
            "MEDIAPARSE_CONFIG",
            "MEDIAPARSE_ADMIN_TOKEN",
            "MEDIAPARSE_DB",
            "MEDIAPARSE_LISTEN",
            "MEDIAPARSE_MCP_ALLOWED_HOSTS",
            "MEDIAPARSE_TEST_MODE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
        );
        if let Some(config) = &options.config {
            cmd.arg("--config").arg(config);
        }
        if let Some(up) = &options.upstream {
            cmd.arg("--upstream").arg(up);
        }
        if let Some(token) = &options.admin_token {
            cmd.env("MEDIAPARSE_ADMIN_TOKEN", token);
        }
        for (k, v) in &options.extra_env {
            cmd.env(k, v);
        }
        cmd.args(&options.extra_args);
        let stderr = match &options.log_file {
            Some(path) => Stdio::from(std::fs::File::create(path)?),
            None => Stdio::inherit(),
        };
        cmd.stdout(Stdio::piped())
            .stderr(stderr)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        let mut lines = BufReader::new(stdout).lines();
        let base_url = tokio::time::timeout(Duration::from_secs(180), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.strip_prefix("listening on ") {
                    return Ok::<String, anyhow::Error>(url.trim().to_string());
                }
            }
            anyhow::bail!("mediaparse exited before listening")
        })
        .await
        .map_err(|_| anyhow::anyhow!("mediaparse did not start listening within 180 s (it compiles every component at start: a loaded machine is slow)"))??;
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Service {
            base_url,
            db,
            child,
            _dir: dir,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Run a CLI command against this service's database; returns stdout.
    pub fn cli(&self, args: &[&str]) -> anyhow::Result<(i32, String)> {
        cli(&self.db, args)
    }

    /// Create a key (`--json`) and return its token.
    pub fn create_key(&self, extra: &[&str]) -> anyhow::Result<String> {
        let mut args = vec!["keys", "create", "--name", "test", "--json"];
        args.extend_from_slice(extra);
        let (code, out) = self.cli(&args)?;
        anyhow::ensure!(code == 0, "keys create failed: {out}");
        let v: serde_json::Value = serde_json::from_str(out.trim())?;
        v["token"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| anyhow::anyhow!("no token in {out}"))
    }

    pub fn add_credits(&self, account: &str, amount: i64) -> anyhow::Result<()> {
        let (code, out) =
            self.cli(&["credits", "add", "--account", account, &amount.to_string()])?;
        anyhow::ensure!(code == 0, "credits add failed: {out}");
        Ok(())
    }

    /// Send SIGKILL (crash tests).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }

    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Send SIGTERM (graceful shutdown tests).
    pub fn terminate(&self) -> anyhow::Result<()> {
        let pid = self
            .child
            .id()
            .ok_or_else(|| anyhow::anyhow!("already exited"))?;
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()?;
        anyhow::ensure!(status.success(), "kill -TERM {pid} failed");
        Ok(())
    }

    /// Wait for the process to exit, at most `timeout`.
    pub async fn wait_exit(
        &mut self,
        timeout: Duration,
    ) -> anyhow::Result<std::process::ExitStatus> {
        tokio::time::timeout(timeout, self.child.wait())
            .await
            .map_err(|_| anyhow::anyhow!("still running after {timeout:?}"))?
            .map_err(anyhow::Error::from)
    }
}

/// Run the `mediaparse` binary with `--db DB ARGS…`.
pub fn cli(db: &Path, args: &[&str]) -> anyhow::Result<(i32, String)> {
    let out = std::process::Command::new(paths::host_binary())
        .arg("--db")
        .arg(db)
        .args(args)
        .env("MEDIAPARSE_EXTRACTORS", paths::extractors_dir())
        .output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}
