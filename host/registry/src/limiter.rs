//! A guest's store limiter: the memory cap and instance bounds of
//! [`StoreLimits`], plus a count of the times a guest's linear memory grew
//! past the size it was instantiated with (reported under the platform's
//! name when the instance ends: `Session`'s `Drop`).
//!
//! A growth is not free: the pooling allocator opens the new pages with
//! `mprotect`, and the next instance in the same slot closes them again, each
//! time with a TLB shootdown on every core the process runs on. Guests are
//! linked with an initial memory large enough for a parse of an ordinary
//! page, so the count (`mediaparse_guest_memory_grows_total`) stays at zero
//! unless a page is unusually large or a guest keeps more than it should.

use wasmtime::{ResourceLimiter, StoreLimits};

pub(crate) struct GuestLimiter {
    limits: StoreLimits,
    /// Growths so far.
    pub(crate) grew: u64,
}

impl GuestLimiter {
    pub(crate) fn new(limits: StoreLimits) -> Self {
        GuestLimiter { limits, grew: 0 }
    }
}

impl ResourceLimiter for GuestLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        // `current` is 0 when the memory is created at instantiation.
        if allowed && current > 0 && desired > current {
            self.grew += 1;
        }
        Ok(allowed)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}
