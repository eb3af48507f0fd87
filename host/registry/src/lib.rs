//! Extractor components: loading `<platform>.wasm` files with their
//! `<platform>.toml` (the platform's facts: `mediaparse_catalogue`),
//! checking who they say they are, routing inputs to them by their declared
//! hosts, and replacing them while the service runs (hot reload:
//! the host's `reload` module). The loaded manifests are the service's catalogue.
//!
//! A parse holds an `Arc<LoadedExtractor>` for its whole life, so a swap
//! never disturbs a parse in flight: it finishes on the component it
//! started with, and the old component is dropped with its last parse.

mod cache;
mod convert;
mod detected;
mod limiter;
mod memo;
mod memory;
pub mod runtime;
#[cfg(feature = "testing")]
pub mod testing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use mediaparse_catalogue::{Catalogue, Manifest};
use mediaparse_sdk as sdk;
use mediaparse_sdk::urls::host_matches;
use sha2::{Digest, Sha256};

pub use cache::{CacheRefused, CompiledCache};
pub use detected::Detected;
pub use memo::{MemoUsage, Memos};
pub use runtime::{Next, Round, Runtime, RuntimeError, SandboxLimits, Session, run_blocking};

use mediaparse_core::Secrets;

/// A compiled, checked, ready-to-instantiate extractor.
pub struct LoadedExtractor {
    pub info: sdk::Info,
    pub wit_version: String,
    pub sha256: String,
    pub source: PathBuf,
    pub loaded_at_unix_s: i64,
    /// `"cache"` when the compiled form came from the on-disk cache, else `"compiled"`.
    pub compiled_from: &'static str,
    /// Time spent compiling (or loading from the cache) and checking, in ms.
    pub load_ms: u64,
    /// Its `<platform>.toml` (a candidate without one: a bare manifest).
    pub manifest: Arc<Manifest>,
    /// This component's recent `detect` answers (shared by the copies of
    /// it that only a changed `.toml` made).
    pub detected: Arc<Detected>,
    pre: runtime::Pre,
}

impl LoadedExtractor {
    pub fn platform(&self) -> &str {
        &self.info.platform
    }

    /// The same component with other platform facts (a changed `.toml`).
    fn with_manifest(&self, manifest: Arc<Manifest>) -> LoadedExtractor {
        LoadedExtractor {
            info: self.info.clone(),
            wit_version: self.wit_version.clone(),
            sha256: self.sha256.clone(),
            source: self.source.clone(),
            loaded_at_unix_s: chrono::Utc::now().timestamp(),
            compiled_from: self.compiled_from,
            load_ms: 0,
            manifest,
            detected: self.detected.clone(),
            pre: self.pre.clone(),
        }
    }

    pub fn accepts_host(&self, host: &str) -> bool {
        self.info.url_hosts.iter().any(|p| host_matches(host, p))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// The last refused load of a file, kept until that file loads or goes away.
#[derive(Clone, Debug)]
pub struct LoadFailure {
    pub message: String,
    pub at_unix_s: i64,
}

/// What a reload of one file did.
#[derive(Debug)]
pub enum Reload {
    /// A new component serves this platform.
    Loaded { platform: String, version: String },
    /// Same bytes as the component already serving: nothing to do.
    Unchanged,
    /// Refused; the previous component (if any) keeps serving.
    Failed { stem: String, message: String },
    /// The file is gone: the platform is disabled until it returns.
    Removed { platform: String },
}

/// Platform → extractor, swapped atomically as a whole.
pub struct Registry {
    runtime: Arc<Runtime>,
    cache: Option<CompiledCache>,
    extractors: ArcSwap<BTreeMap<String, Arc<LoadedExtractor>>>,
    /// Last load error per file stem.
    errors: ArcSwap<BTreeMap<String, LoadFailure>>,
    /// One reload at a time (the watcher and a startup scan never interleave).
    reload_lock: std::sync::Mutex<()>,
    /// What removed components declared, so their URLs still route to
    /// `503 extractor_unavailable` rather than "unsupported URL", and their
    /// platform stays known (listed as unavailable).
    retired: ArcSwap<BTreeMap<String, (sdk::Info, Arc<Manifest>)>>,
    /// Every valid `<platform>.toml` in the folder, with or without its
    /// `.wasm`: a platform declared but not served is known (listed as
    /// unavailable, `503` rather than `404`).
    declared: ArcSwap<BTreeMap<String, Arc<Manifest>>>,
    /// What extractors asked to remember, per platform (outlives reloads).
    memos: Memos,
    /// The folder of the last [`Registry::load_dir`] (for [`Registry::rescan`]).
    dir: std::sync::Mutex<Option<PathBuf>>,
}

impl Registry {
    pub fn new(runtime: Arc<Runtime>) -> Registry {
        Registry::with_cache(runtime, None)
    }

    /// A registry that keeps compiled components in `cache_dir` (`None`: no cache).
    pub fn with_cache(runtime: Arc<Runtime>, cache_dir: Option<PathBuf>) -> Registry {
        let cache = cache_dir.map(|d| CompiledCache::new(d, &runtime.engine));
        Registry::with_compiled_cache(runtime, cache)
    }

    /// A registry that loads through `cache` as it is (an inspected one, say).
    pub fn with_compiled_cache(runtime: Arc<Runtime>, cache: Option<CompiledCache>) -> Registry {
        Registry {
            runtime,
            cache,
            extractors: ArcSwap::from_pointee(BTreeMap::new()),
            errors: ArcSwap::from_pointee(BTreeMap::new()),
            reload_lock: std::sync::Mutex::new(()),
            retired: ArcSwap::from_pointee(BTreeMap::new()),
            declared: ArcSwap::from_pointee(BTreeMap::new()),
            memos: Memos::in_memory(),
            dir: std::sync::Mutex::new(None),
        }
    }

    /// Persist remembered values in `path` (loading what is there).
    pub fn remember_in(mut self, path: &Path) -> Registry {
        self.memos = Memos::open(path);
        self
    }

    /// The platforms' remembered values.
    pub fn memos(&self) -> &Memos {
        &self.memos
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache.as_ref().map(CompiledCache::dir)
    }

    /// Compiled-cache entries refused so far (failed authentication or wasmtime's checks).
    pub fn cache_rejected(&self) -> usize {
        self.cache.as_ref().map_or(0, CompiledCache::rejected)
    }

    /// Drop cached compiled components that nothing serving uses.
    pub fn prune_cache(&self) {
        if let Some(cache) = &self.cache {
            let keep: Vec<String> = self.all().iter().map(|e| e.sha256.clone()).collect();
            cache.retain(&keep);
        }
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Load every `*.wasm` in `dir` with its `.toml`; a broken pair is reported and skipped.
    /// The folder is remembered for [`Registry::rescan`].
    pub fn load_dir(&self, dir: &Path) -> std::io::Result<usize> {
        *self.dir.lock().unwrap_or_else(|p| p.into_inner()) = Some(dir.to_path_buf());
        let outcomes = self.scan(dir)?;
        Ok(outcomes
            .iter()
            .filter(|(_, r)| matches!(r, Reload::Loaded { .. }))
            .count())
    }

    /// Scan the folder of the last [`Registry::load_dir`] again now (the
    /// operator's "re-check"), through the same [`Registry::reload_path`] as
    /// the watcher: per platform file stem, what it did. `None` when no
    /// folder was ever loaded. Blocking (compiles): call it off the request path.
    pub fn rescan(&self) -> Option<std::io::Result<Vec<(String, Reload)>>> {
        let dir = self.dir.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        Some(self.scan(&dir))
    }

    /// One reload per platform in `dir`, whichever of its two files is
    /// seen, and one for every platform served or refused whose files are
    /// gone (the watcher may have missed the removal).
    fn scan(&self, dir: &Path) -> std::io::Result<Vec<(String, Reload)>> {
        let mut stems: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_platform_file(p))
            .map(|p| file_stem(&p))
            .collect();
        stems.extend(self.extractors.load().keys().cloned());
        stems.extend(self.errors.load().keys().cloned());
        stems.sort();
        stems.dedup();
        Ok(stems
            .into_iter()
            .map(|stem| {
                let outcome = self.reload_path(&dir.join(format!("{stem}.wasm")));
                (stem, outcome)
            })
            .collect())
    }

    /// Bring the registry in line with `path` (a `<platform>.wasm` or its
    /// `<platform>.toml` that was created, changed or removed): read the
    /// manifest, compile and check the component, then swap the pair in; on
    /// any error keep what was serving and record the error. Blocking
    /// (compiles): call it off the request path.
    pub fn reload_path(&self, path: &Path) -> Reload {
        let _one_at_a_time = self.reload_lock.lock().unwrap_or_else(|p| p.into_inner());
        let stem = file_stem(path);
        let path = &path.with_extension("wasm");
        self.declare(&stem, manifest_beside(path, &stem).ok().map(Arc::new));
        let metrics = mediaparse_metrics::global();
        if !path.exists() {
            let removed = self.remove(&stem);
            self.forget_error(&stem);
            if removed {
                tracing::warn!(platform = %stem, path = %path.display(), "extractor file removed; platform disabled until it returns");
                metrics.reload(&stem, "removed");
            }
            return Reload::Removed { platform: stem };
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return self.failed(&stem, format!("{}: {e}", path.display())),
        };
        let sha256 = hex::encode(Sha256::digest(&bytes));
        if let Some(current) = self.get(&stem).filter(|e| e.sha256 == sha256) {
            let manifest = match manifest_beside(path, &stem) {
                Ok(m) => Arc::new(m),
                Err(message) => return self.failed(&stem, message),
            };
            self.forget_error(&stem);
            if current.manifest == manifest {
                return Reload::Unchanged;
            }
            // Only the platform's facts changed: no recompilation.
            let ext = current.with_manifest(manifest);
            let (platform, version) = (ext.platform().to_string(), ext.info.version.clone());
            tracing::info!(platform = %platform, "platform.toml reloaded");
            self.install(ext);
            metrics.reload(&platform, "loaded");
            return Reload::Loaded { platform, version };
        }
        // The component's own checks first (WIT major, identity), then its manifest.
        let loaded = self
            .load_bytes(path, &bytes, sha256, true)
            .map_err(|e| format!("{}: {e:#}", path.display()))
            .and_then(|ext| {
                let manifest = Arc::new(manifest_beside(path, &stem)?);
                Ok(LoadedExtractor { manifest, ..ext })
            });
        match loaded {
            Ok(ext) => {
                let (platform, version) = (ext.platform().to_string(), ext.info.version.clone());
                tracing::info!(platform = %platform, version = %version, sha256 = %&ext.sha256[..12], from = ext.compiled_from, load_ms = ext.load_ms, "extractor loaded");
                self.install(ext);
                metrics.reload(&platform, "loaded");
                Reload::Loaded { platform, version }
            }
            Err(message) => self.failed(&stem, message),
        }
    }

    fn failed(&self, stem: &str, message: String) -> Reload {
        let serving = self.get(stem).map(|e| e.info.version.clone());
        tracing::error!(file = %stem, error = %message, serving_version = ?serving, "extractor not loaded; the previous component (if any) keeps serving");
        mediaparse_metrics::global().reload(stem, "failed");
        let failure = LoadFailure {
            message: message.clone(),
            at_unix_s: chrono::Utc::now().timestamp(),
        };
        self.errors.rcu(|errs| {
            let mut errs = BTreeMap::clone(errs);
            errs.insert(stem.to_string(), failure.clone());
            errs
        });
        Reload::Failed {
            stem: stem.to_string(),
            message,
        }
    }

    fn forget_error(&self, stem: &str) {
        if self.errors.load().contains_key(stem) {
            self.errors.rcu(|errs| {
                let mut errs = BTreeMap::clone(errs);
                errs.remove(stem);
                errs
            });
        }
    }

    /// Record (or forget) the valid `.toml` of `stem`.
    fn declare(&self, stem: &str, manifest: Option<Arc<Manifest>>) {
        let current = self.declared.load().get(stem).cloned();
        if current == manifest {
            return;
        }
        self.declared.rcu(|map| {
            let mut map = BTreeMap::clone(map);
            match &manifest {
                Some(m) => map.insert(stem.to_string(), m.clone()),
                None => map.remove(stem),
            };
            map
        });
    }

    /// Stop serving `platform`; parses already holding it finish on it.
    pub fn remove(&self, platform: &str) -> bool {
        let Some(old) = self.get(platform) else {
            return false;
        };
        self.retired.rcu(|map| {
            let mut map = BTreeMap::clone(map);
            map.insert(
                platform.to_string(),
                (old.info.clone(), old.manifest.clone()),
            );
            map
        });
        self.extractors.rcu(|map| {
            let mut map = BTreeMap::clone(map);
            map.remove(platform);
            map
        });
        mediaparse_metrics::global().set_loaded(self.extractors.load().len());
        true
    }

    /// Compile and check one component file and its `.toml` (off the request path).
    pub fn load_file(&self, path: &Path) -> Result<LoadedExtractor, LoadError> {
        let invalid = |message: String| LoadError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let ext = self
            .load_bytes(path, &bytes, sha256, true)
            .map_err(|e| invalid(format!("{e:#}")))?;
        let manifest = manifest_beside(path, &file_stem(path)).map_err(invalid)?;
        Ok(LoadedExtractor {
            manifest: Arc::new(manifest),
            ..ext
        })
    }

    /// Load a candidate component from any file (`mediaparse replay` and
    /// `record --component`): the WIT major is checked, the service's
    /// identity rules (a SPEC platform id, `<platform>.wasm`) are not.
    /// Candidates are never written to the compiled cache.
    pub fn load_candidate(&self, path: &Path) -> Result<LoadedExtractor, LoadError> {
        let invalid = |message: String| LoadError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        self.load_bytes(path, &bytes, sha256, false)
            .map_err(|e| invalid(format!("{e:#}")))
    }

    fn load_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        sha256: String,
        check_identity: bool,
    ) -> anyhow::Result<LoadedExtractor> {
        let started = std::time::Instant::now();
        let cached = self
            .cache
            .as_ref()
            .and_then(|c| c.load(&self.runtime.engine, &sha256));
        let compiled_from = if cached.is_some() {
            "cache"
        } else {
            "compiled"
        };
        let component = match cached {
            Some(c) => c,
            None => self.runtime.compile(bytes)?,
        };
        let wit_version = wit_version(&self.runtime, &component)?;
        check_wit_major(&wit_version)?;
        let pre = self.runtime.prepare(&component, &wit_version)?;
        let stem = file_stem(path);
        let info = run_blocking(async { self.runtime.session(&stem, &pre).await?.info().await })?;
        if !check_identity {
            // A candidate: nothing more to check.
        } else if !mediaparse_catalogue::is_platform_id(&info.platform) {
            anyhow::bail!("info().platform {:?} is not a platform id", info.platform);
        }
        if check_identity && info.platform != stem {
            anyhow::bail!(
                "file is named {stem}.wasm but the component says it is {:?}",
                info.platform
            );
        }
        // Only a component that passed every check is worth caching.
        if let (Some(cache), "compiled", true) = (&self.cache, compiled_from, check_identity) {
            cache.store(&sha256, &component);
        }
        // A candidate's own `.toml` when it has a valid one; the service's
        // loads replace this with the checked one.
        let manifest = Arc::new(
            Manifest::load(&path.with_extension("toml"))
                .ok()
                .filter(|m| m.id == info.platform)
                .unwrap_or_else(|| bare_manifest(&info)),
        );
        Ok(LoadedExtractor {
            manifest,
            info,
            wit_version,
            sha256,
            source: path.to_path_buf(),
            loaded_at_unix_s: chrono::Utc::now().timestamp(),
            compiled_from,
            load_ms: started.elapsed().as_millis() as u64,
            detected: Arc::default(),
            pre,
        })
    }

    pub fn install(&self, ext: LoadedExtractor) {
        let platform = ext.platform().to_string();
        let ext = Arc::new(ext);
        self.extractors.rcu(|map| {
            let mut map = BTreeMap::clone(map);
            map.insert(platform.clone(), ext.clone());
            map
        });
        self.forget_error(&platform);
        if self.retired.load().contains_key(&platform) {
            self.retired.rcu(|map| {
                let mut map = BTreeMap::clone(map);
                map.remove(&platform);
                map
            });
        }
        mediaparse_metrics::global().set_loaded(self.extractors.load().len());
    }

    /// The platform whose removed component accepted URLs on `host`.
    pub fn retired_route(&self, host: &str) -> Option<String> {
        self.retired
            .load()
            .values()
            .find(|(i, _)| i.url_hosts.iter().any(|p| host_matches(host, p)))
            .map(|(i, _)| i.platform.clone())
    }

    pub fn get(&self, platform: &str) -> Option<Arc<LoadedExtractor>> {
        self.extractors.load().get(platform).cloned()
    }

    /// The extractor whose declared URL hosts match `host`.
    pub fn route(&self, host: &str) -> Option<Arc<LoadedExtractor>> {
        self.extractors
            .load()
            .values()
            .find(|e| e.accepts_host(host))
            .cloned()
    }

    pub fn all(&self) -> Vec<Arc<LoadedExtractor>> {
        self.extractors.load().values().cloned().collect()
    }

    /// The platforms of the loaded components: the service's catalogue.
    pub fn catalogue(&self) -> Catalogue {
        let mut catalogue = Catalogue::new();
        for ext in self.extractors.load().values() {
            catalogue.insert(ext.manifest.clone());
        }
        catalogue
    }

    /// Every platform the service knows: loaded, declared by a `.toml`
    /// without its `.wasm`, or removed while running (the last two listed as
    /// unavailable, answering 503 rather than 404).
    pub fn known(&self) -> Catalogue {
        let mut catalogue = self.catalogue();
        let declared = self.declared.load();
        let retired = self.retired.load();
        let others = declared
            .iter()
            .chain(retired.iter().map(|(id, (_, m))| (id, m)));
        for (id, manifest) in others {
            if !catalogue.contains(id) {
                catalogue.insert(manifest.clone());
            }
        }
        catalogue
    }

    /// Is `platform` a platform this service knows (see [`Registry::known`])?
    pub fn knows(&self, platform: &str) -> bool {
        self.extractors.load().contains_key(platform)
            || self.declared.load().contains_key(platform)
            || self.retired.load().contains_key(platform)
    }

    /// Last load error per file stem (files that are currently refused).
    pub fn errors(&self) -> BTreeMap<String, String> {
        self.errors
            .load()
            .iter()
            .map(|(k, v)| (k.clone(), v.message.clone()))
            .collect()
    }

    pub fn failures(&self) -> BTreeMap<String, LoadFailure> {
        BTreeMap::clone(&self.errors.load())
    }

    /// A fresh instance of this extractor for one parse, default limits.
    pub async fn session(&self, ext: &LoadedExtractor) -> Result<Session, RuntimeError> {
        self.runtime.session(ext.platform(), &ext.pre).await
    }

    /// A fresh instance with the platform's limits; `secrets` are scrubbed from its logs.
    pub async fn session_with(
        &self,
        ext: &LoadedExtractor,
        limits: &SandboxLimits,
        secrets: Secrets,
    ) -> Result<Session, RuntimeError> {
        self.runtime
            .session_with(ext.platform(), &ext.pre, limits, secrets)
            .await
    }
}

/// `<platform>.wasm` or `<platform>.toml`, not a hidden or temporary file:
/// a file whose change reloads its platform.
pub fn is_platform_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm" || e == "toml")
        && path
            .file_name()
            .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
}

/// The checked `<stem>.toml` beside `<stem>.wasm`.
fn manifest_beside(wasm: &Path, stem: &str) -> Result<Manifest, String> {
    let toml = wasm.with_extension("toml");
    if !toml.is_file() {
        return Err(format!(
            "no {stem}.toml beside {stem}.wasm: a component is served with its platform.toml \
             (`cargo xtask build-extractors` installs both)"
        ));
    }
    let manifest = Manifest::load(&toml).map_err(|e| e.to_string())?;
    if manifest.id != stem {
        return Err(format!(
            "{}: id {:?} differs from the file name {stem:?}",
            toml.display(),
            manifest.id
        ));
    }
    Ok(manifest)
}

/// The manifest of a candidate that has no `.toml`: its id, nothing listed.
fn bare_manifest(info: &sdk::Info) -> Manifest {
    Manifest {
        id: info.platform.clone(),
        name: info.platform.clone(),
        price: 0,
        order: None,
        example_url: String::new(),
        media_hosts: Vec::new(),
        share_text: false,
        members: Vec::new(),
        optional_members: Vec::new(),
        fetch_profile: None,
        canaries: Vec::new(),
    }
}

/// `<platform>.wasm`, not a hidden or temporary file.
pub fn is_component_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm")
        && path
            .file_name()
            .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Refuse a component built against another WIT major, saying what to do.
fn check_wit_major(wit_version: &str) -> anyhow::Result<()> {
    let major = wit_version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    if major != Some(sdk::WIT_MAJOR) {
        anyhow::bail!(
            "incompatible WIT version: the component was built against mediaparse:extractor@{wit_version}, \
             this host implements mediaparse:extractor@{} (major {}); rebuild the extractor with a \
             mediaparse-sdk whose WIT_VERSION is {}.x",
            sdk::WIT_VERSION,
            sdk::WIT_MAJOR,
            sdk::WIT_MAJOR
        );
    }
    Ok(())
}

/// The `mediaparse:extractor` version a component was built against, read
/// from its interface names (`mediaparse:extractor/types@1.0.0`).
fn wit_version(
    runtime: &Runtime,
    component: &wasmtime::component::Component,
) -> anyhow::Result<String> {
    let ty = component.component_type();
    let names: Vec<String> = ty
        .imports(&runtime.engine)
        .map(|(n, _)| n.to_string())
        .chain(ty.exports(&runtime.engine).map(|(n, _)| n.to_string()))
        .collect();
    names
        .iter()
        .find_map(|n| {
            n.strip_prefix("mediaparse:extractor/")
                .and_then(|rest| rest.split_once('@'))
                .map(|(_, v)| v.to_string())
        })
        .ok_or_else(|| {
            anyhow::anyhow!(
                "not a mediaparse extractor component (no mediaparse:extractor interface)"
            )
        })
}
