//! The on-disk cache of compiled components (`.cwasm`), so a restart with
//! unchanged components skips cranelift. An entry is named by the SHA-256 of
//! the component's bytes and a digest of the engine's precompile
//! compatibility hash (which covers the wasmtime version, the target and
//! every code-generation setting), so an entry from another wasmtime or
//! another configuration is never even opened. Entries are written to a
//! temporary name and renamed, so concurrent services can share a folder.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

pub struct CompiledCache {
    dir: PathBuf,
    engine_key: String,
}

/// Feeds `Hash` output into SHA-256: stable across Rust versions, unlike `DefaultHasher`.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

impl CompiledCache {
    pub fn new(dir: PathBuf, engine: &Engine) -> CompiledCache {
        let mut h = Sha256Hasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut h);
        let engine_key = hex::encode(&h.0.finalize()[..8]);
        CompiledCache { dir, engine_key }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}-{}.cwasm", self.engine_key))
    }

    /// The compiled component for these bytes, if cached. A corrupt entry is removed.
    pub fn load(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let path = self.path(sha256);
        if !path.is_file() {
            return None;
        }
        // SAFETY: entries are written only by `store` below, from
        // `Component::serialize` of this engine configuration (the name
        // carries its compatibility hash), into the operator's cache folder.
        // wasmtime still checks the header and refuses a mismatched artifact.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "dropping an unusable compiled-cache entry");
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Delete entries for components other than `keep` (SHA-256s), and
    /// entries of other engines. Run once after start-up, so the folder does
    /// not grow with every version ever swapped in; a service sharing the
    /// folder only loses speed.
    pub fn retain(&self, keep: &[String]) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_suffix(".cwasm") else {
                continue;
            };
            let wanted = stem.rsplit_once('-').is_some_and(|(sha, engine)| {
                engine == self.engine_key && keep.iter().any(|k| k == sha)
            });
            if !wanted {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Save a compiled component; failures only cost the next start its speed.
    pub fn store(&self, sha256: &str, component: &Component) {
        let result = (|| -> anyhow::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let bytes = component
                .serialize()
                .map_err(|e| anyhow::anyhow!("serialize: {e}"))?;
            let path = self.path(sha256);
            let tmp = self.dir.join(format!(
                ".{sha256}.{}.{}.tmp",
                std::process::id(),
                rand::random::<u32>()
            ));
            std::fs::write(&tmp, bytes)?;
            std::fs::rename(&tmp, &path)?;
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!(dir = %self.dir.display(), error = %e, "cannot write the compiled cache");
        }
    }
}
