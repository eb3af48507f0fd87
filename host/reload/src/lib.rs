//! Hot reload: one watcher thread (notify) over the extractors folder and
//! the configuration file's folder. Events are debounced (a write fires
//! several), then the changed components are compiled and checked on that
//! thread — never on the request path — and swapped in; a changed
//! configuration file is parsed, checked and swapped in the same way. A
//! file that fails leaves what was serving in place and is reported in the
//! log, in `mediaparse_extractor_reloads_total` /
//! `mediaparse_config_reloads_total` and in `GET /api/v1/admin/extractors`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecursiveMode, Watcher};
use sha2::{Digest, Sha256};

use mediaparse_config::OperatorConfig;
use mediaparse_registry::{Registry, is_platform_file};

/// What the watcher swaps: the loaded components and the configuration.
pub struct Watched {
    pub registry: Arc<Registry>,
    pub config: Arc<ArcSwap<OperatorConfig>>,
    pub config_source: Arc<ConfigSource>,
}

/// Quiet time after the last event before a reload.
pub const DEBOUNCE: Duration = Duration::from_millis(150);
/// A burst of events never delays a reload longer than this.
const MAX_DELAY: Duration = Duration::from_secs(2);

/// Where the configuration came from, and how its last reload went.
#[derive(Debug, Default)]
pub struct ConfigSource {
    /// The file (`--config`), if any.
    pub path: Option<PathBuf>,
    status: ArcSwap<ConfigStatus>,
}

#[derive(Clone, Debug, Default)]
pub struct ConfigStatus {
    /// SHA-256 of the text in force.
    pub sha256: Option<String>,
    pub loaded_at_unix_s: Option<i64>,
    /// The last refused version of the file, until a good one is loaded.
    pub last_error: Option<(String, i64)>,
}

impl ConfigSource {
    /// Load the file at start (an error here stops the service).
    pub fn open(path: Option<PathBuf>) -> anyhow::Result<(ConfigSource, OperatorConfig)> {
        let source = ConfigSource {
            path,
            status: ArcSwap::from_pointee(ConfigStatus::default()),
        };
        let config = match &source.path {
            Some(p) => {
                let text = read(p)?;
                let config = OperatorConfig::parse(&text)
                    .map_err(|m| anyhow::anyhow!("{}: {m}", p.display()))?;
                source.status.store(Arc::new(ConfigStatus {
                    sha256: Some(digest(&text)),
                    loaded_at_unix_s: Some(chrono::Utc::now().timestamp()),
                    last_error: None,
                }));
                config
            }
            None => OperatorConfig::default(),
        };
        Ok((source, config))
    }

    pub fn status(&self) -> ConfigStatus {
        ConfigStatus::clone(&self.status.load())
    }

    /// Re-read the file; swap `target` if its text changed and is valid.
    /// Returns whether a new configuration is in force.
    pub fn reload(&self, target: &ArcSwap<OperatorConfig>) -> bool {
        let Some(path) = &self.path else { return false };
        let metrics = mediaparse_metrics::global();
        let now = chrono::Utc::now().timestamp();
        let refuse = |message: String| {
            tracing::error!(path = %path.display(), error = %message, "configuration not reloaded; the previous one stays in force");
            metrics.config_reload("failed");
            self.status.rcu(|s| ConfigStatus {
                last_error: Some((message.clone(), now)),
                ..ConfigStatus::clone(s)
            });
            false
        };
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => return refuse(e.to_string()),
        };
        let sha = digest(&text);
        if self.status.load().sha256.as_deref() == Some(sha.as_str()) {
            return false;
        }
        match OperatorConfig::parse(&text) {
            Ok(config) => {
                target.store(Arc::new(config));
                self.status.store(Arc::new(ConfigStatus {
                    sha256: Some(sha),
                    loaded_at_unix_s: Some(now),
                    last_error: None,
                }));
                metrics.config_reload("loaded");
                tracing::info!(path = %path.display(), "configuration reloaded");
                true
            }
            Err(m) => refuse(m),
        }
    }
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {}", path.display(), e.kind()))
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Start the watcher thread. It lives as long as the process.
pub fn spawn(state: Watched, extractors_dir: &Path) -> anyhow::Result<()> {
    let (tx, rx) = channel::<notify::Result<Event>>();
    let mut watcher = notify::recommended_watcher(tx)?;
    let extractors_dir = std::fs::canonicalize(extractors_dir)?;
    watcher.watch(&extractors_dir, RecursiveMode::NonRecursive)?;
    // Watch the configuration's folder, not the file: editors and
    // orchestrators replace the file (rename, symlink swap).
    let config_dir = match state.config_source.path.clone() {
        Some(p) => {
            let parent = p
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let dir = std::fs::canonicalize(parent)?;
            if dir != extractors_dir {
                watcher.watch(&dir, RecursiveMode::NonRecursive)?;
            }
            Some(dir)
        }
        None => None,
    };
    std::thread::Builder::new()
        .name("hot-reload".into())
        .spawn(move || {
            let _watcher = watcher;
            let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
            let mut first: Option<Instant> = None;
            loop {
                let event = if pending.is_empty() {
                    rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
                } else {
                    let waited = first.map(|f| f.elapsed()).unwrap_or_default();
                    rx.recv_timeout(DEBOUNCE.min(MAX_DELAY.saturating_sub(waited)))
                };
                match event {
                    Ok(Ok(event)) if relevant(&event.kind) => {
                        first.get_or_insert_with(Instant::now);
                        pending.extend(event.paths);
                    }
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => tracing::warn!(error = %e, "file watcher error"),
                    Err(RecvTimeoutError::Timeout) => {
                        let paths = std::mem::take(&mut pending);
                        first = None;
                        apply(&state, &extractors_dir, config_dir.as_deref(), paths);
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        })?;
    Ok(())
}

fn relevant(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

fn apply(
    state: &Watched,
    extractors_dir: &Path,
    config_dir: Option<&Path>,
    paths: BTreeSet<PathBuf>,
) {
    let mut config_touched = false;
    for path in paths {
        let dir = path.parent();
        if dir == Some(extractors_dir) && is_platform_file(&path) {
            let started = Instant::now();
            let outcome = state.registry.reload_path(&path);
            tracing::debug!(
                ?outcome,
                elapsed_ms = started.elapsed().as_millis() as u64,
                "reload"
            );
        }
        if config_dir.is_some() && dir == config_dir {
            config_touched = true;
        }
    }
    if config_touched {
        state.config_source.reload(&state.config);
    }
}
