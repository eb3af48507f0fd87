//! The wasm runtime: one engine, components compiled once and kept
//! pre-instantiated, a fresh store per parse with a memory cap and an
//! epoch deadline on every call, and WASI linked with nothing granted.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits,
    StoreLimitsBuilder,
};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::convert;
use crate::core::Secrets;
use mediaparse_sdk as sdk;

pub(super) mod bindings {
    wasmtime::component::bindgen!({ path: "../wit", world: "extractor" });
}

/// Limits applied to every guest call.
#[derive(Clone, Debug)]
pub struct SandboxLimits {
    /// Linear memory a component may grow to.
    pub memory_bytes: usize,
    /// Wall time one call (detect, plan or map) may take.
    pub call_timeout: Duration,
    /// Largest output accepted from one call: `map`'s platform-data JSON plus
    /// every media string, or the requests `plan` returns.
    pub max_output_bytes: usize,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        SandboxLimits {
            memory_bytes: 256 << 20,
            call_timeout: Duration::from_secs(5),
            max_output_bytes: 16 << 20,
        }
    }
}

const EPOCH_TICK: Duration = Duration::from_millis(10);

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The guest trapped, ran out of time or memory, or broke the contract.
    #[error("extractor {platform} failed: {message}")]
    Guest { platform: String, message: String },
}

/// The process-wide engine and linker.
pub struct Runtime {
    pub(super) engine: Engine,
    linker: Linker<GuestState>,
    pub limits: SandboxLimits,
}

/// Per-store host state.
pub struct GuestState {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    platform: String,
    log_lines_left: u32,
    secrets: Secrets,
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl bindings::ExtractorImports for GuestState {
    fn log(&mut self, level: u8, message: String) {
        if self.log_lines_left == 0 {
            return;
        }
        self.log_lines_left -= 1;
        let message: String = message.chars().take(1024).collect();
        let message = self.secrets.redact(&message);
        let platform = self.platform.as_str();
        match level {
            0 => tracing::error!(target: "mediaparse::extractor", platform, "{message}"),
            1 => tracing::warn!(target: "mediaparse::extractor", platform, "{message}"),
            2 => tracing::info!(target: "mediaparse::extractor", platform, "{message}"),
            _ => tracing::debug!(target: "mediaparse::extractor", platform, "{message}"),
        }
    }
}

impl bindings::mediaparse::extractor::types::Host for GuestState {}

impl Runtime {
    pub fn new(limits: SandboxLimits) -> anyhow::Result<Arc<Runtime>> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling(&limits)));
        let engine = Engine::new(&config).map_err(|e| anyhow::anyhow!("wasm engine: {e}"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| anyhow::anyhow!("linking WASI: {e}"))?;
        bindings::Extractor::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| anyhow::anyhow!("linking the extractor world: {e}"))?;
        // The epoch ticker: deadlines are counted in ticks of this thread.
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })?;
        Ok(Arc::new(Runtime {
            engine,
            linker,
            limits,
        }))
    }

    pub fn compile(&self, bytes: &[u8]) -> anyhow::Result<Component> {
        Component::new(&self.engine, bytes).map_err(|e| anyhow::anyhow!("compiling component: {e}"))
    }

    pub fn prepare(
        &self,
        component: &Component,
    ) -> anyhow::Result<bindings::ExtractorPre<GuestState>> {
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| anyhow::anyhow!("linking component: {e}"))?;
        bindings::ExtractorPre::new(pre)
            .map_err(|e| anyhow::anyhow!("component does not export the extractor world: {e}"))
    }

    /// A fresh store and instance with the runtime's default limits.
    pub fn session(
        self: &Arc<Self>,
        platform: &str,
        pre: &bindings::ExtractorPre<GuestState>,
    ) -> Result<Session, RuntimeError> {
        self.session_with(platform, pre, &self.limits, Secrets::default())
    }

    /// A fresh store and instance: nothing leaks between parses. `limits`
    /// are the platform's (operator configuration); `secrets` are scrubbed
    /// from the guest's log lines.
    pub fn session_with(
        self: &Arc<Self>,
        platform: &str,
        pre: &bindings::ExtractorPre<GuestState>,
        limits: &SandboxLimits,
        secrets: Secrets,
    ) -> Result<Session, RuntimeError> {
        let state = GuestState {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .trap_on_grow_failure(true)
                .instances(64)
                .build(),
            platform: platform.to_string(),
            log_lines_left: 64,
            secrets,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(deadline_ticks(limits));
        let guest = pre
            .instantiate(&mut store)
            .map_err(|e| guest_error(platform, e))?;
        Ok(Session {
            store,
            guest,
            platform: platform.to_string(),
            limits: limits.clone(),
        })
    }
}

fn deadline_ticks(limits: &SandboxLimits) -> u64 {
    (limits.call_timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
}

/// Instance slots are reused rather than mapped afresh for every parse, and
/// a slot keeps the first `KEEP_RESIDENT` bytes of its linear memory resident
/// (zeroed with `memset` instead of `madvise`): a parse then starts on memory
/// whose pages are already faulted in. `cargo xtask bench` showed a fresh
/// instance's `map` paying 30–50 % more than a second call in the same
/// instance, from growing and first touching its heap.
///
/// Every live parse holds one instance, so `MAX_LIVE_INSTANCES` bounds the
/// parses in flight; past it, instantiation fails and the parse answers
/// `500 extractor_failed` (the semaphore in front of the pool is future work).
fn pooling(_limits: &SandboxLimits) -> PoolingAllocationConfig {
    const WASM32_MAX_MEMORY: usize = 1 << 32;
    const MAX_LIVE_INSTANCES: u32 = 1000;
    const KEEP_RESIDENT: usize = 4 << 20;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(MAX_LIVE_INSTANCES)
        .total_memories(MAX_LIVE_INSTANCES)
        .total_tables(MAX_LIVE_INSTANCES * 4)
        .total_core_instances(MAX_LIVE_INSTANCES * 8)
        .max_core_instances_per_component(8)
        .max_memories_per_component(2)
        .max_tables_per_component(4)
        // Slots are sized for any wasm32 memory; the per-platform cap (which
        // the operator configuration may raise above the default) is the
        // store limiter's, with its clear trap on a failed growth.
        .max_memory_size(WASM32_MAX_MEMORY)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(64 << 10);
    pool
}

/// A guest error, counted as a sandbox kill when the sandbox stopped it.
fn guest_error(platform: &str, e: wasmtime::Error) -> RuntimeError {
    let text = format!("{e:#}");
    let (reason, message) = match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => (
            Some("deadline"),
            "the call ran past its deadline".to_string(),
        ),
        _ if text.contains("forcing trap when growing memory")
            || text.contains("forcing a memory growth failure") =>
        {
            (Some("memory"), "the guest hit its memory cap".to_string())
        }
        Some(trap) => (Some("trap"), format!("trap: {trap}")),
        None => (None, text.lines().next().unwrap_or_default().to_string()),
    };
    if let Some(reason) = reason {
        crate::metrics::global().sandbox_kill(platform, reason);
    }
    RuntimeError::Guest {
        platform: platform.to_string(),
        message,
    }
}

fn output_too_large(platform: &str, what: &str, size: usize, limit: usize) -> RuntimeError {
    crate::metrics::global().sandbox_kill(platform, "output_limit");
    RuntimeError::Guest {
        platform: platform.to_string(),
        message: format!("{what} output of {size} bytes is over the {limit}-byte cap"),
    }
}

/// One parse's instance. Calls are blocking CPU work: run them on a blocking thread.
pub struct Session {
    store: Store<GuestState>,
    guest: bindings::Extractor,
    platform: String,
    limits: SandboxLimits,
}

impl Session {
    fn arm(&mut self) {
        self.store.set_epoch_deadline(deadline_ticks(&self.limits));
    }

    pub fn info(&mut self) -> Result<sdk::Info, RuntimeError> {
        self.arm();
        let info = self
            .guest
            .call_info(&mut self.store)
            .map_err(|e| guest_error(&self.platform, e))?;
        Ok(convert::info(info))
    }

    pub fn detect(
        &mut self,
        input: &str,
    ) -> Result<Result<sdk::Target, sdk::Failure>, RuntimeError> {
        self.arm();
        let out = self
            .guest
            .call_detect(&mut self.store, input)
            .map_err(|e| guest_error(&self.platform, e))?;
        Ok(out.map(convert::target_in).map_err(convert::failure_in))
    }

    pub fn plan(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<sdk::Plan, sdk::Failure>, RuntimeError> {
        self.arm();
        let (t, c, d) = (
            convert::target_out(target),
            convert::context_out(ctx),
            convert::exchanges_out(done),
        );
        let out = self
            .guest
            .call_plan(&mut self.store, &t, &c, &d)
            .map_err(|e| guest_error(&self.platform, e))?;
        let out = out.map(convert::plan_in).map_err(convert::failure_in);
        if let Ok(sdk::Plan::Fetch(requests)) = &out {
            let size: usize = requests
                .iter()
                .map(|r| {
                    r.url.len()
                        + r.body.as_ref().map_or(0, Vec::len)
                        + r.headers
                            .iter()
                            .map(|h| h.name.len() + h.value.len())
                            .sum::<usize>()
                })
                .sum();
            if size > self.limits.max_output_bytes {
                return Err(output_too_large(
                    &self.platform,
                    "plan",
                    size,
                    self.limits.max_output_bytes,
                ));
            }
        }
        Ok(out)
    }

    pub fn map(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<(sdk::Media, String), sdk::Failure>, RuntimeError> {
        self.arm();
        let (t, c, d) = (
            convert::target_out(target),
            convert::context_out(ctx),
            convert::exchanges_out(done),
        );
        let out = self
            .guest
            .call_map(&mut self.store, &t, &c, &d)
            .map_err(|e| guest_error(&self.platform, e))?;
        match out {
            Ok(extraction) => {
                let media = convert::media_in(extraction.media);
                let size = extraction.platform_data.len() + media_size(&media);
                if size > self.limits.max_output_bytes {
                    return Err(output_too_large(
                        &self.platform,
                        "map",
                        size,
                        self.limits.max_output_bytes,
                    ));
                }
                Ok(Ok((media, extraction.platform_data)))
            }
            Err(f) => Ok(Err(convert::failure_in(f))),
        }
    }
}

/// Bytes of text in a media object (what a caller would receive).
fn media_size(m: &sdk::Media) -> usize {
    let headers =
        |hs: &[sdk::Header]| -> usize { hs.iter().map(|h| h.name.len() + h.value.len()).sum() };
    m.title.len()
        + m.thumbnail.len()
        + m.images.iter().map(|i| i.url.len()).sum::<usize>()
        + m.videos
            .iter()
            .map(|v| v.url.len() + v.quality.len() + v.mime_type.len() + headers(&v.headers))
            .sum::<usize>()
        + m.audios
            .iter()
            .map(|a| a.url.len() + a.quality.len() + a.mime_type.len() + headers(&a.headers))
            .sum::<usize>()
}
