//! Extractor components: loading `<platform>.wasm` files, checking who they
//! say they are, and routing inputs to them by their declared hosts.

mod convert;
pub mod runtime;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use mediaparse_sdk as sdk;
use mediaparse_sdk::urls::host_matches;
use sha2::{Digest, Sha256};

pub use runtime::{Runtime, RuntimeError, SandboxLimits, Session};

/// A compiled, checked, ready-to-instantiate extractor.
pub struct LoadedExtractor {
    pub info: sdk::Info,
    pub wit_version: String,
    pub sha256: String,
    pub source: PathBuf,
    pub loaded_at_unix_s: i64,
    pre: runtime::bindings::ExtractorPre<runtime::GuestState>,
}

impl LoadedExtractor {
    pub fn platform(&self) -> &str {
        &self.info.platform
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

/// Platform → extractor, swapped atomically as a whole.
pub struct Registry {
    runtime: Arc<Runtime>,
    extractors: ArcSwap<BTreeMap<String, Arc<LoadedExtractor>>>,
    /// Last load error per file stem.
    errors: ArcSwap<BTreeMap<String, String>>,
}

impl Registry {
    pub fn new(runtime: Arc<Runtime>) -> Registry {
        Registry {
            runtime,
            extractors: ArcSwap::from_pointee(BTreeMap::new()),
            errors: ArcSwap::from_pointee(BTreeMap::new()),
        }
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Load every `*.wasm` in `dir`; a broken file is reported and skipped.
    pub fn load_dir(&self, dir: &Path) -> std::io::Result<usize> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
            .collect();
        paths.sort();
        let mut loaded = 0;
        for path in paths {
            match self.load_file(&path) {
                Ok(ext) => {
                    tracing::info!(platform = ext.platform(), version = %ext.info.version, sha256 = %&ext.sha256[..12], "extractor loaded");
                    self.install(ext);
                    loaded += 1;
                }
                Err(e) => {
                    tracing::error!(error = %e, "extractor not loaded");
                    let stem = path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    self.errors.rcu(|errs| {
                        let mut errs = BTreeMap::clone(errs);
                        errs.insert(stem.clone(), e.to_string());
                        errs
                    });
                }
            }
        }
        Ok(loaded)
    }

    /// Compile and check one component file (off the request path).
    pub fn load_file(&self, path: &Path) -> Result<LoadedExtractor, LoadError> {
        let invalid = |message: String| LoadError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
        self.load_bytes(path, &bytes, true)
            .map_err(|e| invalid(format!("{e:#}")))
    }

    /// Load a candidate component from any file (`mediaparse replay` and
    /// `record --component`): the WIT major is checked, the service's
    /// identity rules (a SPEC platform id, `<platform>.wasm`) are not.
    pub fn load_candidate(&self, path: &Path) -> Result<LoadedExtractor, LoadError> {
        let invalid = |message: String| LoadError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| invalid(e.to_string()))?;
        self.load_bytes(path, &bytes, false)
            .map_err(|e| invalid(format!("{e:#}")))
    }

    fn load_bytes(
        &self,
        path: &Path,
        bytes: &[u8],
        check_identity: bool,
    ) -> anyhow::Result<LoadedExtractor> {
        let component = self.runtime.compile(bytes)?;
        let wit_version = wit_version(&self.runtime, &component)?;
        check_wit_major(&wit_version)?;
        let pre = self.runtime.prepare(&component)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let info = self.runtime.session(&stem, &pre)?.info()?;
        if !check_identity {
            // A candidate: nothing more to check.
        } else if !sdk::spec::PLATFORMS.contains(&info.platform.as_str()) {
            anyhow::bail!("info().platform {:?} is not a platform id", info.platform);
        }
        if check_identity && info.platform != stem {
            anyhow::bail!(
                "file is named {stem}.wasm but the component says it is {:?}",
                info.platform
            );
        }
        Ok(LoadedExtractor {
            info,
            wit_version,
            sha256: hex::encode(Sha256::digest(bytes)),
            source: path.to_path_buf(),
            loaded_at_unix_s: chrono::Utc::now().timestamp(),
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
        self.errors.rcu(|errs| {
            let mut errs = BTreeMap::clone(errs);
            errs.remove(&platform);
            errs
        });
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

    pub fn errors(&self) -> BTreeMap<String, String> {
        BTreeMap::clone(&self.errors.load())
    }

    /// A fresh instance of this extractor for one parse.
    pub fn session(&self, ext: &LoadedExtractor) -> Result<Session, RuntimeError> {
        self.runtime.session(ext.platform(), &ext.pre)
    }
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
