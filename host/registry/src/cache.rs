//! The on-disk cache of compiled components (`.cwasm`), so a restart with
//! unchanged components skips cranelift. An entry is named by the SHA-256 of
//! the component's bytes and a digest of the engine's precompile
//! compatibility hash (which covers the wasmtime version, the target and
//! every code-generation setting), so an entry from another wasmtime or
//! another configuration is never even opened. Entries are written to a
//! temporary name and renamed, so concurrent services can share a folder.
//!
//! An entry is native code, so nothing that can be written by others is
//! trusted: the folder must belong to the service's user and be writable by
//! no one else (else the cache is off), and each entry carries an
//! HMAC-SHA256 of its name and bytes under a per-installation key
//! (`.cache-key`, 32 random bytes, mode 0600, beside the entries). An entry
//! whose tag does not verify is deleted and the component recompiled; it is
//! never deserialized.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

const KEY_FILE: &str = ".cache-key";
const TAG_LEN: usize = 32;

pub struct CompiledCache {
    dir: PathBuf,
    engine_key: String,
    /// The installation's key; `None` when the folder or key is refused.
    key: Option<[u8; 32]>,
    /// Opened for inspection (`mediaparse diagnose`): nothing is created,
    /// written or deleted; entries that fail their checks are only counted.
    read_only: bool,
    /// Entries that failed authentication or wasmtime's checks.
    rejected: std::sync::atomic::AtomicUsize,
}

/// Why the cache folder is not trusted.
#[derive(Debug, thiserror::Error)]
#[error("compiled cache {path}: {why}")]
pub struct CacheRefused {
    pub path: PathBuf,
    pub why: String,
}

fn refused(path: &Path, why: impl Into<String>) -> CacheRefused {
    CacheRefused {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// Create (0700) or check the folder, then create (0600) or read the key.
fn open_key(dir: &Path) -> Result<[u8; 32], CacheRefused> {
    let io = |e: std::io::Error| refused(dir, e.to_string());
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(io)?;
    check_private(dir, &std::fs::metadata(dir).map_err(io)?, 0o022)?;
    let key_path = dir.join(KEY_FILE);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(&key_path) {
        Ok(mut file) => {
            let key: [u8; 32] = rand::random();
            file.write_all(&key).map_err(io)?;
            file.sync_all().map_err(io)?;
            return Ok(key);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    let meta = std::fs::symlink_metadata(&key_path).map_err(io)?;
    if !meta.is_file() {
        return Err(refused(&key_path, "the key is not a regular file"));
    }
    check_private(&key_path, &meta, 0o077)?;
    let bytes = std::fs::read(&key_path).map_err(io)?;
    bytes
        .try_into()
        .map_err(|_| refused(&key_path, "the key is not 32 bytes"))
}

/// Owned by this process's user, with none of `forbidden` mode bits.
#[cfg(unix)]
fn check_private(
    path: &Path,
    meta: &std::fs::Metadata,
    forbidden: u32,
) -> Result<(), CacheRefused> {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to the process's effective user.
    if let Ok(me) = std::fs::metadata("/proc/self")
        && meta.uid() != me.uid()
    {
        return Err(refused(
            path,
            format!(
                "owned by uid {}, not the service's uid {}",
                meta.uid(),
                me.uid()
            ),
        ));
    }
    if meta.mode() & forbidden != 0 {
        return Err(refused(
            path,
            format!(
                "mode {:o} lets others write or read it",
                meta.mode() & 0o777
            ),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &Path, _: &std::fs::Metadata, _: u32) -> Result<(), CacheRefused> {
    Ok(())
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

/// A digest of the engine's precompile compatibility hash, part of every entry's name.
fn engine_key(engine: &Engine) -> String {
    let mut h = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut h);
    hex::encode(&h.0.finalize()[..8])
}

impl CompiledCache {
    pub fn new(dir: PathBuf, engine: &Engine) -> CompiledCache {
        let engine_key = engine_key(engine);
        let key = match open_key(&dir) {
            Ok(key) => Some(key),
            Err(e) => {
                tracing::error!(error = %e, "compiled cache off: components are compiled at every start");
                None
            }
        };
        CompiledCache {
            dir,
            engine_key,
            key,
            read_only: false,
            rejected: Default::default(),
        }
    }

    /// Open an existing cache without changing anything: the folder must
    /// exist and be private, its key present, private and 32 bytes. Loads
    /// from it never delete an entry and nothing is ever stored.
    pub fn inspect(dir: PathBuf, engine: &Engine) -> Result<CompiledCache, CacheRefused> {
        let io = |p: &Path, e: std::io::Error| refused(p, e.to_string());
        let meta = std::fs::metadata(&dir).map_err(|e| io(&dir, e))?;
        if !meta.is_dir() {
            return Err(refused(&dir, "not a folder"));
        }
        check_private(&dir, &meta, 0o022)?;
        let key_path = dir.join(KEY_FILE);
        let meta = std::fs::symlink_metadata(&key_path).map_err(|e| io(&key_path, e))?;
        if !meta.is_file() {
            return Err(refused(&key_path, "the key is not a regular file"));
        }
        check_private(&key_path, &meta, 0o077)?;
        let key: [u8; 32] = std::fs::read(&key_path)
            .map_err(|e| io(&key_path, e))?
            .try_into()
            .map_err(|_| refused(&key_path, "the key is not 32 bytes"))?;
        Ok(CompiledCache {
            engine_key: engine_key(engine),
            dir,
            key: Some(key),
            read_only: true,
            rejected: Default::default(),
        })
    }

    /// How many entries failed authentication or wasmtime's checks so far.
    pub fn rejected(&self) -> usize {
        self.rejected.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Count a bad entry; remove it unless only inspecting.
    fn reject(&self, path: &Path) {
        self.rejected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !self.read_only {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Whether the folder and key passed the checks (else load/store do nothing).
    pub fn is_trusted(&self) -> bool {
        self.key.is_some()
    }

    /// HMAC-SHA256 of the entry's file name and bytes.
    fn mac(&self, key: &[u8; 32], name: &str, bytes: &[u8]) -> Hmac<Sha256> {
        // HMAC takes a key of any length: `new_from_slice` cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        mac.update(name.as_bytes());
        mac.update(&(bytes.len() as u64).to_le_bytes());
        mac.update(bytes);
        mac
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn name(&self, sha256: &str) -> String {
        format!("{sha256}-{}.cwasm", self.engine_key)
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(self.name(sha256))
    }

    /// The compiled component for these bytes, if cached and authentic. An
    /// entry that fails its HMAC or wasmtime's checks is removed.
    pub fn load(&self, engine: &Engine, sha256: &str) -> Option<Component> {
        let key = self.key.as_ref()?;
        let path = self.path(sha256);
        if !path.is_file() {
            return None;
        }
        let file = std::fs::read(&path).ok()?;
        let authentic = file.len() > TAG_LEN && {
            let (bytes, tag) = file.split_at(file.len() - TAG_LEN);
            self.mac(key, &self.name(sha256), bytes)
                .verify_slice(tag)
                .is_ok()
        };
        if !authentic {
            tracing::warn!(path = %path.display(), "compiled-cache entry failed authentication; recompiling");
            self.reject(&path);
            return None;
        }
        let bytes = &file[..file.len() - TAG_LEN];
        // SAFETY: the bytes carry a valid HMAC under this installation's key
        // (readable only by the service), so they were written by `store`
        // below from `Component::serialize` of this engine configuration (the
        // name carries its compatibility hash). wasmtime still checks the
        // header and refuses a mismatched artifact.
        match unsafe { Component::deserialize(engine, bytes) } {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "dropping an unusable compiled-cache entry");
                self.reject(&path);
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
        let Some(key) = self.key.as_ref().filter(|_| !self.read_only) else {
            return;
        };
        let result = (|| -> anyhow::Result<()> {
            let mut bytes = component
                .serialize()
                .map_err(|e| anyhow::anyhow!("serialize: {e}"))?;
            let tag = self
                .mac(key, &self.name(sha256), &bytes)
                .finalize()
                .into_bytes();
            bytes.extend_from_slice(&tag);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component: the preamble of an empty one.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn engine() -> Engine {
        Engine::default()
    }

    #[test]
    fn an_entry_round_trips_and_a_tampered_one_is_never_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine();
        let cache = CompiledCache::new(dir.path().join("c"), &engine);
        assert!(cache.is_trusted());
        let component = Component::new(&engine, EMPTY_COMPONENT).unwrap();
        cache.store("abc", &component);
        assert!(cache.load(&engine, "abc").is_some());
        // Flip one byte of the compiled code: the tag no longer verifies.
        let path = cache.path("abc");
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(cache.load(&engine, "abc").is_none());
        assert!(!path.exists(), "a failing entry is deleted");
        // An entry renamed to another component's name fails too.
        cache.store("abc", &component);
        std::fs::rename(cache.path("abc"), cache.path("def")).unwrap();
        assert!(cache.load(&engine, "def").is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_others_can_write_is_refused_and_the_key_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let engine = engine();
        let good = dir.path().join("good");
        let cache = CompiledCache::new(good.clone(), &engine);
        assert!(cache.is_trusted());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&good), 0o700);
        assert_eq!(mode(&good.join(KEY_FILE)), 0o600);

        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let cache = CompiledCache::new(open.clone(), &engine);
        assert!(!cache.is_trusted());
        cache.store("abc", &Component::new(&engine, EMPTY_COMPONENT).unwrap());
        assert!(
            !cache.path("abc").exists(),
            "nothing is written to a refused folder"
        );

        // A key others can read is refused too.
        std::fs::set_permissions(good.join(KEY_FILE), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        assert!(!CompiledCache::new(good, &engine).is_trusted());
    }
}
