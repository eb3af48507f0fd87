//! `detect`'s recent answers for one component. `detect` sees nothing but
//! its input (no context, no exchanges, a fresh instance for every call), so
//! its answer is a function of the input: for an input this component has
//! already detected, the parse takes the target from here and makes no
//! instance for it. A parse-cache hit then runs no guest at all.
//!
//! Only targets are kept: a refused input costs its caller nothing, and
//! keeping refusals would let any caller fill the memo. Both the entries and
//! the length of the inputs kept are bounded, so the memo stays near a MiB
//! per component however it is fed; the least recently used entry leaves
//! first.

use std::num::NonZeroUsize;
use std::sync::Mutex;

use lru::LruCache;
use mediaparse_sdk as sdk;

/// Inputs remembered per component.
const ENTRIES: NonZeroUsize = NonZeroUsize::new(1024).expect("nonzero");

/// Longer inputs (share text with a long caption) are detected every time.
const LONGEST_INPUT: usize = 512;

/// One component's remembered `detect` answers, by input.
pub struct Detected {
    targets: Mutex<LruCache<Box<str>, sdk::Target>>,
}

impl Default for Detected {
    fn default() -> Self {
        Detected {
            targets: Mutex::new(LruCache::new(ENTRIES)),
        }
    }
}

impl Detected {
    /// The target `detect` answered for `input`, if it is remembered.
    pub fn get(&self, input: &str) -> Option<sdk::Target> {
        self.lock().get(input).cloned()
    }

    /// Remember that `detect(input)` answered `target`.
    pub fn keep(&self, input: &str, target: &sdk::Target) {
        if input.len() > LONGEST_INPUT {
            return;
        }
        self.lock().put(input.into(), target.clone());
    }

    /// Inputs remembered now.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The map's lock; a panic while it was held left no half-made entry
    /// (each operation is one call into the map), so a poisoned lock is sound.
    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<Box<str>, sdk::Target>> {
        self.targets.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(id: &str) -> sdk::Target {
        sdk::Target::new("example", id, format!("https://example.com/v/{id}"), "")
    }

    #[test]
    fn a_kept_target_is_found_by_its_input() {
        let memo = Detected::default();
        assert!(memo.get("https://example.com/v/1").is_none());
        memo.keep("https://example.com/v/1", &target("1"));
        assert_eq!(
            memo.get("https://example.com/v/1").map(|t| t.id),
            Some("1".into())
        );
        assert!(memo.get("https://example.com/v/2").is_none());
    }

    #[test]
    fn long_inputs_are_not_kept() {
        let memo = Detected::default();
        let long = format!("https://example.com/v/1?{}", "x".repeat(LONGEST_INPUT));
        memo.keep(&long, &target("1"));
        assert!(memo.is_empty());
    }

    #[test]
    fn the_memo_is_bounded_and_drops_the_least_recently_used() {
        let memo = Detected::default();
        for i in 0..ENTRIES.get() {
            memo.keep(&format!("u{i}"), &target(&i.to_string()));
        }
        // Used just now: it outlives the entries kept after it.
        assert!(memo.get("u0").is_some());
        memo.keep("one more", &target("x"));
        assert_eq!(memo.len(), ENTRIES.get());
        assert!(memo.get("u0").is_some());
        assert!(
            memo.get("u1").is_none(),
            "the least recently used entry left"
        );
    }
}
