//! `mediaparse diagnose [--json]`: what `serve` would meet at start, checked
//! without starting it. Takes the same options as `serve` (the same
//! argument struct), opens the database read-only, listens on nothing and
//! creates, writes or deletes nothing. One line per check; exit status 1
//! when any check failed.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use super::ServeArgs;
use crate::config::OperatorConfig;
use crate::registry::{CompiledCache, Registry, Runtime, SandboxLimits};
use crate::store::{self, DbLocation, Probe};

#[derive(Args, Debug)]
pub struct DiagnoseArgs {
    /// Print the checks as a JSON array of `{check, status, detail}`.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Below this much free space on the data folder the disk check fails.
const MIN_FREE_BYTES: u64 = 100 * 1024 * 1024;
/// How long an exit has to accept a TCP connection.
const EXIT_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Largest difference allowed between this host's clock and PostgreSQL's:
/// key expiry, tunnel tokens and the shared rate buckets compare times
/// written by different hosts.
const MAX_CLOCK_SKEW_MS: i64 = 2_000;
/// How far the database's newest record may be ahead of this clock (a
/// record written by another host with a slightly faster clock).
const MAX_RECORD_AHEAD_S: i64 = 60;
/// A clock before this (2025-01-01T00:00:00Z) was never set.
const CLOCK_FLOOR_S: i64 = 1_735_689_600;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Fail,
    Skip,
}

/// One check's outcome.
#[derive(Debug, Serialize)]
pub struct Check {
    pub check: String,
    pub status: Status,
    pub detail: String,
}

impl Check {
    fn new(check: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
        Check {
            check: check.into(),
            status,
            detail: detail.into(),
        }
    }

    fn line(&self) -> String {
        let status = match self.status {
            Status::Ok => "ok",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        };
        format!("{status:<4}  {}: {}", self.check, self.detail)
    }
}

/// Run every check, print them, and return the exit status.
pub fn run(db: &DbLocation, args: DiagnoseArgs) -> anyhow::Result<i32> {
    let checks = checks(db, &args.serve);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&checks)?);
    } else {
        for c in &checks {
            println!("{}", c.line());
        }
    }
    Ok(i32::from(checks.iter().any(|c| c.status == Status::Fail)))
}

/// Every check, in the order `serve` meets what it checks.
pub fn checks(db: &DbLocation, args: &ServeArgs) -> Vec<Check> {
    let mut out = Vec::new();
    let config = config_check(args.config.as_deref(), &mut out);
    let probe = database_checks(db, &mut out);
    out.push(disk_check(db));
    let extractors = args.extractors.resolve();
    let cache = args.compiled_cache.resolve(&extractors);
    extractor_checks(&extractors, cache.as_deref(), &mut out);
    match &config {
        Some(config) => exit_checks(config, &mut out),
        None => out.push(Check::new(
            "exits",
            Status::Skip,
            "the configuration did not parse",
        )),
    }
    out.push(tunnel_keys_check(&args.tunnel));
    out.push(ffmpeg_check(args.tunnel.ffmpeg.as_deref()));
    out.push(clock_check(probe.as_ref()));
    permission_checks(db, cache.as_deref(), &mut out);
    out
}

fn config_check(path: Option<&Path>, out: &mut Vec<Check>) -> Option<OperatorConfig> {
    let Some(path) = path else {
        out.push(Check::new(
            "config",
            Status::Ok,
            "no --config: built-in defaults",
        ));
        return Some(OperatorConfig::default());
    };
    // The error names the place, never a value (values may be secrets).
    match OperatorConfig::load(path) {
        Ok(config) => {
            out.push(Check::new(
                "config",
                Status::Ok,
                format!(
                    "{} parses ({} platform sections)",
                    path.display(),
                    config.platforms.len()
                ),
            ));
            Some(config)
        }
        Err(e) => {
            out.push(Check::new("config", Status::Fail, e.to_string()));
            None
        }
    }
}

fn database_checks(db: &DbLocation, out: &mut Vec<Check>) -> Option<Probe> {
    match store::probe(db) {
        Ok(Some(probe)) => {
            out.push(Check::new(
                "database",
                Status::Ok,
                format!("{db} answers ({}, opened read-only)", probe.backend),
            ));
            let (found, supported) = (probe.schema_version, probe.supported_version);
            out.push(if found == supported {
                Check::new("schema", Status::Ok, format!("version {found}, current"))
            } else if found < supported {
                Check::new(
                    "schema",
                    Status::Ok,
                    format!("version {found}; serve migrates it to {supported} at start"),
                )
            } else {
                Check::new(
                    "schema",
                    Status::Fail,
                    format!(
                        "version {found} was written by a newer binary (this one knows {supported}); serve refuses it"
                    ),
                )
            });
            Some(probe)
        }
        Ok(None) => {
            out.push(Check::new(
                "database",
                Status::Skip,
                format!("{db} does not exist yet; serve creates it (mode 0600)"),
            ));
            out.push(Check::new("schema", Status::Skip, "no database yet"));
            None
        }
        Err(e) => {
            out.push(Check::new("database", Status::Fail, format!("{db}: {e}")));
            out.push(Check::new(
                "schema",
                Status::Skip,
                "the database did not answer",
            ));
            None
        }
    }
}

/// Free space where the SQLite file (or, on PostgreSQL, this host's own
/// files) lives.
fn disk_check(db: &DbLocation) -> Check {
    let file = db.data_file();
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match free_bytes(&folder) {
        Ok(free) if free >= MIN_FREE_BYTES => Check::new(
            "disk",
            Status::Ok,
            format!("{} MiB free in {}", free >> 20, folder.display()),
        ),
        Ok(free) => Check::new(
            "disk",
            Status::Fail,
            format!(
                "{} MiB free in {} (less than {} MiB)",
                free >> 20,
                folder.display(),
                MIN_FREE_BYTES >> 20
            ),
        ),
        Err(e) => Check::new("disk", Status::Fail, format!("{}: {e}", folder.display())),
    }
}

#[cfg(unix)]
fn free_bytes(folder: &Path) -> std::io::Result<u64> {
    let stat = rustix::fs::statvfs(folder)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(not(unix))]
fn free_bytes(_: &Path) -> std::io::Result<u64> {
    Err(std::io::Error::other("not measured on this system"))
}

/// Load every component as `serve` does, through the compiled cache opened
/// read-only: an entry that fails authentication is counted, not deleted,
/// and nothing compiled here is written.
fn extractor_checks(dir: &Path, cache_dir: Option<&Path>, out: &mut Vec<Check>) {
    let runtime = match Runtime::new(SandboxLimits::default()) {
        Ok(r) => r,
        Err(e) => {
            out.push(Check::new(
                "extractors",
                Status::Fail,
                format!("wasm engine: {e}"),
            ));
            out.push(Check::new("compiled-cache", Status::Skip, "no wasm engine"));
            return;
        }
    };
    let (cache, cache_check) = match cache_dir {
        None => (
            None,
            Some(Check::new("compiled-cache", Status::Skip, "off")),
        ),
        Some(d) if !d.exists() => (
            None,
            Some(Check::new(
                "compiled-cache",
                Status::Ok,
                format!(
                    "{} not created yet; serve creates it (mode 0700)",
                    d.display()
                ),
            )),
        ),
        Some(d) => match CompiledCache::inspect(d.to_path_buf(), runtime.engine()) {
            Ok(c) => (Some(c), None),
            Err(e) => (
                None,
                Some(Check::new(
                    "compiled-cache",
                    Status::Fail,
                    format!("{e}; serve compiles every component at each start"),
                )),
            ),
        },
    };
    let registry = Registry::with_compiled_cache(runtime, cache);
    match registry.load_dir(dir) {
        Err(e) => out.push(Check::new(
            "extractors",
            Status::Fail,
            format!("{}: {e}", dir.display()),
        )),
        Ok(0) if registry.failures().is_empty() => out.push(Check::new(
            "extractors",
            Status::Fail,
            format!("no component in {}", dir.display()),
        )),
        Ok(loaded) => {
            let failures = registry.failures();
            if failures.is_empty() {
                out.push(Check::new(
                    "extractors",
                    Status::Ok,
                    format!("{loaded} loaded from {}", dir.display()),
                ));
            } else {
                let named: Vec<String> = failures
                    .iter()
                    .map(|(stem, f)| format!("{stem}: {}", f.message))
                    .collect();
                out.push(Check::new(
                    "extractors",
                    Status::Fail,
                    format!(
                        "{loaded} loaded, {} refused: {}",
                        failures.len(),
                        named.join("; ")
                    ),
                ));
            }
        }
    }
    if let Some(check) = cache_check {
        out.push(check);
        return;
    }
    let all = registry.all();
    let from_cache = all.iter().filter(|e| e.compiled_from == "cache").count();
    let rejected = registry.cache_rejected();
    let dir = registry
        .cache_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    out.push(if rejected > 0 {
        Check::new(
            "compiled-cache",
            Status::Fail,
            format!(
                "{dir}: {rejected} entries fail authentication or wasmtime's checks (serve deletes and recompiles them)"
            ),
        )
    } else {
        Check::new(
            "compiled-cache",
            Status::Ok,
            format!(
                "{dir}: private, {from_cache} of {} components load from it",
                all.len()
            ),
        )
    });
}

/// Every configured exit of every platform accepts a TCP connection. Only
/// the platform and label are printed: exit URLs carry credentials.
fn exit_checks(config: &OperatorConfig, out: &mut Vec<Check>) {
    let mut any = false;
    for platform in config.platforms.keys() {
        for exit in config.exits(platform) {
            let Some(url) = exit.url.as_deref() else {
                continue;
            };
            any = true;
            let name = format!("exit {platform}/{}", exit.label);
            out.push(match exit_address(url) {
                Err(why) => Check::new(name, Status::Fail, why),
                Ok(addrs) => connect(&addrs).map_or_else(
                    |why| Check::new(&name, Status::Fail, why),
                    |ms| Check::new(&name, Status::Ok, format!("accepts a connection ({ms} ms)")),
                ),
            });
        }
    }
    if !any {
        out.push(Check::new(
            "exits",
            Status::Skip,
            "none configured: every platform connects directly",
        ));
    }
}

fn exit_address(url: &str) -> Result<Vec<SocketAddr>, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| "the URL has no host".to_string())?;
    let port = parsed
        .port_or_known_default()
        .unwrap_or(match parsed.scheme() {
            "socks5" | "socks5h" | "socks4" | "socks4a" => 1080,
            _ => 80,
        });
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (host, port)
        .to_socket_addrs()
        .map(Iterator::collect)
        .map_err(|e| format!("cannot resolve its host: {}", e.kind()))
}

/// Milliseconds until the first address accepted, or why none did.
fn connect(addrs: &[SocketAddr]) -> Result<u128, String> {
    let started = Instant::now();
    let mut last = "no address".to_string();
    for addr in addrs {
        match TcpStream::connect_timeout(addr, EXIT_CONNECT_TIMEOUT) {
            Ok(_) => return Ok(started.elapsed().as_millis()),
            Err(e) => last = e.kind().to_string(),
        }
    }
    Err(format!("does not accept a connection: {last}"))
}

/// With a public base URL, tunnel URLs outlive a restart and may be opened
/// by another host only if the keys are set.
fn tunnel_keys_check(args: &super::TunnelArgs) -> Check {
    if let Some(base) = &args.public_base_url {
        match url::Url::parse(base) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            Ok(_) => {
                return Check::new(
                    "tunnel-keys",
                    Status::Fail,
                    "--public-base-url must be an http(s) URL",
                );
            }
            Err(e) => {
                return Check::new(
                    "tunnel-keys",
                    Status::Fail,
                    format!("--public-base-url: {e}"),
                );
            }
        }
    }
    match (&args.public_base_url, &args.tunnel_keys) {
        (_, Some(spec)) => match crate::tunnel::token::Keyring::parse(spec) {
            Ok(_) => Check::new("tunnel-keys", Status::Ok, "--tunnel-keys parse"),
            Err(e) => Check::new("tunnel-keys", Status::Fail, format!("--tunnel-keys: {e}")),
        },
        (Some(_), None) => Check::new(
            "tunnel-keys",
            Status::Fail,
            "--public-base-url is set but --tunnel-keys is not: tunnel URLs die at every restart and no other host opens them",
        ),
        (None, None) => Check::new(
            "tunnel-keys",
            Status::Skip,
            "no --public-base-url: tunnel URLs are sealed with a random key per start",
        ),
    }
}

/// Merges are on unless `--ffmpeg off`; a configured program must run.
fn ffmpeg_check(configured: Option<&Path>) -> Check {
    if configured.is_some_and(|p| p.as_os_str() == "off") {
        return Check::new("ffmpeg", Status::Skip, "--ffmpeg off: merges are off");
    }
    let Some(program) = crate::tunnel::merge::find_ffmpeg(configured) else {
        return match configured {
            Some(p) => Check::new(
                "ffmpeg",
                Status::Fail,
                format!(
                    "--ffmpeg {}: no such program (serve refuses to start)",
                    p.display()
                ),
            ),
            None => Check::new(
                "ffmpeg",
                Status::Skip,
                "none on PATH: merges answer 501 merge_unavailable (--ffmpeg off says so)",
            ),
        };
    };
    match std::process::Command::new(&program)
        .arg("-version")
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let first = text.lines().next().unwrap_or_default();
            let version = first.split_whitespace().nth(2).unwrap_or("unknown");
            Check::new(
                "ffmpeg",
                Status::Ok,
                format!("{} (version {version})", program.display()),
            )
        }
        Ok(o) => Check::new(
            "ffmpeg",
            Status::Fail,
            format!("{} -version exited with {}", program.display(), o.status),
        ),
        Err(e) => Check::new(
            "ffmpeg",
            Status::Fail,
            format!("{}: {e}", program.display()),
        ),
    }
}

/// The system clock is set (after a floor), not behind the newest time the
/// database recorded (it went back), and on PostgreSQL within
/// [`MAX_CLOCK_SKEW_MS`] of the server's clock.
fn clock_check(probe: Option<&Probe>) -> Check {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let now_s = now_ms / 1000;
    if now_s < CLOCK_FLOOR_S {
        return Check::new(
            "clock",
            Status::Fail,
            format!("the system clock says {now_s} (Unix seconds): never set"),
        );
    }
    let mut said = Vec::new();
    if let Some(newest) = probe.and_then(|p| p.newest_record_s) {
        if newest > now_s + MAX_RECORD_AHEAD_S {
            return Check::new(
                "clock",
                Status::Fail,
                format!(
                    "the database holds a record from {}s in the future: the clock went back",
                    newest - now_s
                ),
            );
        }
        said.push("not behind the newest record".to_string());
    }
    if let Some(server_ms) = probe.and_then(|p| p.server_clock_ms) {
        let skew = now_ms - server_ms;
        if skew.abs() > MAX_CLOCK_SKEW_MS {
            return Check::new(
                "clock",
                Status::Fail,
                format!(
                    "{skew} ms off the PostgreSQL server's clock (at most {MAX_CLOCK_SKEW_MS} ms)"
                ),
            );
        }
        said.push(format!("{skew} ms off the PostgreSQL server's clock"));
    }
    let detail = if said.is_empty() {
        "set (no database records to compare with)".to_string()
    } else {
        format!("set, {}", said.join(", "))
    };
    Check::new("clock", Status::Ok, detail)
}

/// The database (and its WAL files), the session jar, the remembered values
/// and the compiled cache are the owner's only: files with no group or
/// other bits (0600), folders likewise (0700).
fn permission_checks(db: &DbLocation, cache: Option<&Path>, out: &mut Vec<Check>) {
    let data = db.data_file();
    let mut items: Vec<(&str, Vec<PathBuf>)> = Vec::new();
    if let DbLocation::Sqlite(path) = db {
        items.push((
            "database",
            ["", "-wal", "-shm"]
                .iter()
                .map(|suffix| {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    PathBuf::from(p)
                })
                .collect(),
        ));
    }
    items.push(("session-jar", vec![data.with_extension("sessions.json")]));
    items.push(("remembered", vec![data.with_file_name("remembered.json")]));
    if let Some(dir) = cache {
        items.push((
            "compiled-cache",
            vec![dir.to_path_buf(), dir.join(".cache-key")],
        ));
    }
    for (what, paths) in items {
        let name = format!("permissions {what}");
        let mut seen = Vec::new();
        let mut bad = Vec::new();
        for path in &paths {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            let mode = mode_of(&meta);
            seen.push(format!("{} {mode:04o}", path.display()));
            if mode & 0o077 != 0 {
                let want = if meta.is_dir() { "0700" } else { "0600" };
                bad.push(format!("{} is {mode:04o}, want {want}", path.display()));
            }
        }
        out.push(if seen.is_empty() {
            Check::new(
                name,
                Status::Skip,
                format!("{} not created yet", paths[0].display()),
            )
        } else if bad.is_empty() {
            Check::new(name, Status::Ok, seen.join(", "))
        } else {
            Check::new(name, Status::Fail, bad.join(", "))
        });
    }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777
}

#[cfg(not(unix))]
fn mode_of(_: &std::fs::Metadata) -> u32 {
    0o600
}
