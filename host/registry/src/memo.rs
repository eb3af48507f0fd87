//! Remembered values (WIT 1.1 memos): small values an extractor hands the
//! host to get back in later parses' `context.remembered` — for example what
//! it learned from a script it fetched once. Kept per platform under keys the
//! extractor names (the host knows no platform or key), bounded in key and
//! value size, count per platform and TTL, and persisted to one small JSON
//! file so they survive a restart. Values are the extractor's, never an
//! operator secret: they are not scrubbed, but are never listed either
//! (the admin view shows counts and bytes only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mediaparse_sdk as sdk;
use serde::{Deserialize, Serialize};

/// Longest key accepted.
pub const MAX_KEY_BYTES: usize = 128;
/// Largest value accepted (the SDK's bound, which extractors see).
pub const MAX_VALUE_BYTES: usize = sdk::MAX_MEMO_VALUE_BYTES;
/// Keys kept per platform; a new key past it is dropped.
pub const MAX_PER_PLATFORM: usize = 32;
/// Longest TTL honoured; a longer one is cut to it.
pub const MAX_TTL_SECONDS: u32 = 30 * 24 * 3600;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    value: String,
    expires_unix_s: u64,
}

type Table = BTreeMap<String, BTreeMap<String, Entry>>;

/// Per-platform remembered values.
pub struct Memos {
    /// Where they persist (`None`: in memory only).
    path: Option<PathBuf>,
    table: Mutex<Table>,
}

/// What one platform holds (the admin listing: never the values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoUsage {
    pub count: usize,
    pub bytes: usize,
}

impl Memos {
    pub fn in_memory() -> Memos {
        Memos {
            path: None,
            table: Mutex::new(Table::new()),
        }
    }

    /// Values persisted at `path`; an unreadable or corrupt file starts
    /// empty (they are a cache of what extractors learned, not a record).
    pub fn open(path: &Path) -> Memos {
        let table = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(file = %path.display(), error = %e, "remembered values unreadable; starting empty");
                Table::new()
            }),
            Err(_) => Table::new(),
        };
        Memos {
            path: Some(path.to_path_buf()),
            table: Mutex::new(table),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding it leaves a consistent map: keep using it.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The platform's unexpired values, as `context.remembered` carries them.
    pub fn remembered(&self, platform: &str, now_unix_s: u64) -> Vec<sdk::Header> {
        self.lock()
            .get(platform)
            .into_iter()
            .flatten()
            .filter(|(_, e)| e.expires_unix_s > now_unix_s)
            .map(|(k, e)| sdk::Header::new(k.clone(), e.value.clone()))
            .collect()
    }

    /// Keep what a parse asked to remember, within the bounds (a memo over
    /// one is dropped with a warning; a zero TTL forgets its key). Returns
    /// how many were kept.
    pub fn remember(&self, platform: &str, memos: &[sdk::Memo], now_unix_s: u64) -> usize {
        if memos.is_empty() {
            return 0;
        }
        let mut kept = 0;
        let snapshot = {
            let mut table = self.lock();
            let entries = table.entry(platform.to_string()).or_default();
            entries.retain(|_, e| e.expires_unix_s > now_unix_s);
            for memo in memos {
                if memo.key.is_empty() || memo.key.len() > MAX_KEY_BYTES {
                    tracing::warn!(
                        platform,
                        key_bytes = memo.key.len(),
                        "memo dropped: key empty or over {MAX_KEY_BYTES} bytes"
                    );
                    continue;
                }
                if memo.value.len() > MAX_VALUE_BYTES {
                    tracing::warn!(platform, key = %memo.key, value_bytes = memo.value.len(), "memo dropped: value over {MAX_VALUE_BYTES} bytes");
                    continue;
                }
                if memo.ttl_seconds == 0 {
                    entries.remove(&memo.key);
                    continue;
                }
                if !entries.contains_key(&memo.key) && entries.len() >= MAX_PER_PLATFORM {
                    tracing::warn!(platform, key = %memo.key, "memo dropped: {MAX_PER_PLATFORM} keys already remembered");
                    continue;
                }
                let ttl = u64::from(memo.ttl_seconds.min(MAX_TTL_SECONDS));
                entries.insert(
                    memo.key.clone(),
                    Entry {
                        value: memo.value.clone(),
                        expires_unix_s: now_unix_s.saturating_add(ttl),
                    },
                );
                kept += 1;
            }
            if entries.is_empty() {
                table.remove(platform);
            }
            self.path.as_ref().map(|_| table.clone())
        };
        if let (Some(path), Some(table)) = (&self.path, snapshot) {
            persist(path, &table);
        }
        kept
    }

    /// Count and bytes (keys plus values) of a platform's unexpired values.
    pub fn usage(&self, platform: &str, now_unix_s: u64) -> MemoUsage {
        let table = self.lock();
        let live = table
            .get(platform)
            .into_iter()
            .flatten()
            .filter(|(_, e)| e.expires_unix_s > now_unix_s);
        live.fold(MemoUsage::default(), |u, (k, e)| MemoUsage {
            count: u.count + 1,
            bytes: u.bytes + k.len() + e.value.len(),
        })
    }
}

/// Write the table beside its final name, then rename: a crash leaves the
/// old file or the new one, never half of one. Owner-only (values may be tokens).
fn persist(path: &Path, table: &Table) {
    let written = serde_json::to_vec(table)
        .map_err(std::io::Error::other)
        .and_then(|bytes| mediaparse_core::private_file::write_private(path, &bytes));
    if let Err(e) = written {
        tracing::warn!(file = %path.display(), error = %e, "remembered values not persisted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo(key: &str, value: &str, ttl_seconds: u32) -> sdk::Memo {
        sdk::Memo {
            key: key.into(),
            value: value.into(),
            ttl_seconds,
        }
    }

    #[test]
    fn values_come_back_until_they_expire_and_survive_a_restart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("remembered.json");
        let memos = Memos::open(&path);
        assert_eq!(
            memos.remember("p", &[memo("player:1", "prog", 60)], 1_000),
            1
        );
        assert_eq!(
            memos.remembered("p", 1_059),
            vec![sdk::Header::new("player:1", "prog")]
        );
        assert!(memos.remembered("p", 1_060).is_empty());
        assert!(memos.remembered("q", 1_000).is_empty());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "remembered values are the owner's only");
        }
        let reopened = Memos::open(&path);
        assert_eq!(reopened.remembered("p", 1_000).len(), 1);
        assert_eq!(
            reopened.usage("p", 1_000),
            MemoUsage {
                count: 1,
                bytes: "player:1prog".len()
            }
        );
    }

    #[test]
    fn bounds_drop_what_is_over_them() {
        let memos = Memos::in_memory();
        let big = "x".repeat(MAX_VALUE_BYTES + 1);
        assert_eq!(memos.remember("p", &[memo("k", &big, 60)], 0), 0);
        assert_eq!(
            memos.remember("p", &[memo(&"k".repeat(MAX_KEY_BYTES + 1), "v", 60)], 0),
            0
        );
        let many: Vec<sdk::Memo> = (0..MAX_PER_PLATFORM + 3)
            .map(|i| memo(&format!("k{i}"), "v", 60))
            .collect();
        assert_eq!(memos.remember("p", &many, 0), MAX_PER_PLATFORM);
        assert_eq!(memos.usage("p", 0).count, MAX_PER_PLATFORM);
        // Replacing a known key is allowed at the cap; a zero TTL forgets it.
        assert_eq!(memos.remember("p", &[memo("k0", "w", 60)], 0), 1);
        memos.remember("p", &[memo("k0", "", 0)], 0);
        assert_eq!(memos.usage("p", 0).count, MAX_PER_PLATFORM - 1);
        // A TTL past the cap is cut to it.
        memos.remember("q", &[memo("k", "v", u32::MAX)], 0);
        assert!(memos.remembered("q", u64::from(MAX_TTL_SECONDS)).is_empty());
    }
}
