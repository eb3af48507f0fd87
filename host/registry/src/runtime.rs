//! The wasm runtime: one engine, components compiled once and kept
//! pre-instantiated, a fresh store per parse with a memory cap and an
//! epoch deadline on every call, and WASI linked with nothing granted and
//! sealed: its clocks and randomness come from the parse (see [`sealed`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimitsBuilder,
    UpdateDeadline,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::convert;
use mediaparse_core::Secrets;
use mediaparse_sdk as sdk;

/// `mediaparse:extractor@1.1.0` (`wit/extractor.wit`).
pub(super) mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "extractor",
        exports: { default: async },
    });
}

/// The frozen `mediaparse:extractor@1.0.0` (`wit/1.0/extractor.wit`): one
/// bindings module per WIT version, chosen by the version a component names.
pub(super) mod bindings_1_0 {
    wasmtime::component::bindgen!({
        path: "../../wit/1.0",
        world: "extractor",
        exports: { default: async },
    });
}

/// A component linked and ready to instantiate, by the WIT version it was built against.
#[derive(Clone)]
pub enum Pre {
    V1_1(bindings::ExtractorPre<GuestState>),
    V1_0(bindings_1_0::ExtractorPre<GuestState>),
}

enum Guest {
    V1_1(bindings::Extractor),
    V1_0(bindings_1_0::Extractor),
}

/// What one round of a parse decided.
#[derive(Debug)]
pub enum Next {
    /// Perform these requests, then step again.
    Fetch(Vec<sdk::HttpRequest>),
    /// The media and the platform data JSON text.
    Done(sdk::Media, String),
}

/// One round's answer and the values the extractor asks to remember.
#[derive(Debug)]
pub struct Round {
    pub next: Next,
    pub remember: Vec<sdk::Memo>,
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

/// Drive a guest call to its end on this thread: for callers outside an
/// async runtime (the CLI's tools, the component checks at load, the
/// bench). Guests do no I/O, so the call needs no reactor; its yields at
/// each epoch tick resume at once.
pub fn run_blocking<F: std::future::Future>(call: F) -> F::Output {
    futures::executor::block_on(call)
}

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The guest trapped, ran out of time or memory, or broke the contract.
    #[error("extractor {platform} failed: {message}")]
    Guest { platform: String, message: String },
}

/// The process-wide engine and a linker per WIT version (both define the
/// world's root `log` import, so they cannot share one).
pub struct Runtime {
    pub(super) engine: Engine,
    linker: Linker<GuestState>,
    linker_1_0: Linker<GuestState>,
    pub limits: SandboxLimits,
    /// Instances alive now ([`Runtime::live_instances`]).
    live: Arc<AtomicUsize>,
    /// Instances made so far ([`Runtime::instances_made`]).
    made: AtomicU64,
}

/// One live instance, counted while its [`Session`] exists.
struct Live(Arc<AtomicUsize>);

impl Live {
    fn new(count: &Arc<AtomicUsize>) -> Live {
        count.fetch_add(1, Ordering::Relaxed);
        Live(count.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Per-store host state.
pub struct GuestState {
    wasi: WasiCtx,
    /// Which parse the WASI context is sealed to (`None`: not yet one).
    sealed_to: Option<sealed::Seal>,
    table: ResourceTable,
    limits: crate::limiter::GuestLimiter,
    platform: String,
    log_lines_left: u32,
    secrets: Secrets,
    /// When the call in progress must stop (its wall-time budget).
    call_deadline: std::time::Instant,
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

impl bindings_1_0::ExtractorImports for GuestState {
    fn log(&mut self, level: u8, message: String) {
        bindings::ExtractorImports::log(self, level, message)
    }
}

impl bindings_1_0::mediaparse::extractor::types::Host for GuestState {}

impl Runtime {
    /// The wasm engine (a [`super::CompiledCache`] is keyed by its configuration).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn new(limits: SandboxLimits) -> anyhow::Result<Arc<Runtime>> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling(&limits)));
        let engine = Engine::new(&config).map_err(|e| anyhow::anyhow!("wasm engine: {e}"))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| anyhow::anyhow!("linking WASI: {e}"))?;
        let mut linker_1_0 = linker.clone();
        bindings::Extractor::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| anyhow::anyhow!("linking the extractor world: {e}"))?;
        bindings_1_0::Extractor::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut linker_1_0,
            |s| s,
        )
        .map_err(|e| anyhow::anyhow!("linking the extractor 1.0 world: {e}"))?;
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
            linker_1_0,
            limits,
            live: Arc::default(),
            made: AtomicU64::new(0),
        }))
    }

    /// Instances of this runtime alive now: each one holds a pool slot and
    /// its linear memory until its session ends.
    pub fn live_instances(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Instances this runtime has made since it started.
    pub fn instances_made(&self) -> u64 {
        self.made.load(Ordering::Relaxed)
    }

    pub fn compile(&self, bytes: &[u8]) -> anyhow::Result<Component> {
        let compiled = Component::new(&self.engine, bytes)
            .map_err(|e| anyhow::anyhow!("compiling component: {e}"));
        crate::memory::return_freed_memory();
        compiled
    }

    /// Link a component with the bindings of the WIT version it names
    /// (`1.0.x` the frozen 1.0 world, any later 1.x the current one).
    pub fn prepare(&self, component: &Component, wit_version: &str) -> anyhow::Result<Pre> {
        let not_world = |e: wasmtime::Error| {
            anyhow::anyhow!("component does not export the extractor world {wit_version}: {e}")
        };
        if wit_version.starts_with("1.0.") {
            let pre = self
                .linker_1_0
                .instantiate_pre(component)
                .map_err(|e| anyhow::anyhow!("linking component: {e}"))?;
            return bindings_1_0::ExtractorPre::new(pre)
                .map(Pre::V1_0)
                .map_err(not_world);
        }
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| anyhow::anyhow!("linking component: {e}"))?;
        bindings::ExtractorPre::new(pre)
            .map(Pre::V1_1)
            .map_err(not_world)
    }

    /// A fresh store and instance with the runtime's default limits.
    pub async fn session(
        self: &Arc<Self>,
        platform: &str,
        pre: &Pre,
    ) -> Result<Session, RuntimeError> {
        self.session_with(platform, pre, &self.limits, Secrets::default())
            .await
    }

    /// A fresh store and instance: nothing leaks between parses. `limits`
    /// are the platform's (operator configuration); `secrets` are scrubbed
    /// from the guest's log lines.
    pub async fn session_with(
        self: &Arc<Self>,
        platform: &str,
        pre: &Pre,
        limits: &SandboxLimits,
        secrets: Secrets,
    ) -> Result<Session, RuntimeError> {
        let state = GuestState {
            wasi: sealed::wasi(&sealed::Seal::before_parse(platform)),
            sealed_to: None,
            table: ResourceTable::new(),
            limits: crate::limiter::GuestLimiter::new(
                StoreLimitsBuilder::new()
                    .memory_size(limits.memory_bytes)
                    .trap_on_grow_failure(true)
                    .instances(64)
                    .build(),
            ),
            platform: platform.to_string(),
            log_lines_left: 64,
            secrets,
            call_deadline: std::time::Instant::now() + limits.call_timeout,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        // Every tick the guest runs, look at its deadline and its parse.
        store.epoch_deadline_callback(|ctx| {
            let state = ctx.data();
            if std::time::Instant::now() >= state.call_deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                // Let the thread's other tasks run before going on.
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
        let guest = match pre {
            Pre::V1_1(pre) => pre.instantiate_async(&mut store).await.map(Guest::V1_1),
            Pre::V1_0(pre) => pre.instantiate_async(&mut store).await.map(Guest::V1_0),
        }
        .map_err(|e| guest_error(platform, e))?;
        self.made.fetch_add(1, Ordering::Relaxed);
        Ok(Session {
            store,
            guest,
            guest_calls: 0,
            platform: platform.to_string(),
            limits: limits.clone(),
            _live: Live::new(&self.live),
        })
    }
}

/// Instance slots are reused rather than mapped afresh for every parse, and
/// a slot keeps the first `KEEP_RESIDENT` bytes of its linear memory resident
/// (zeroed with `memset` instead of `madvise`): a parse then starts on memory
/// whose pages are already faulted in. `cargo xtask bench` showed a fresh
/// instance's `map` paying 30–50 % more than a second call in the same
/// instance, from growing and first touching its heap.
///
/// On Linux 6.7 and later a slot is reset by scanning which of its pages
/// were written (`PAGEMAP_SCAN`) and resetting only those, instead of
/// `memset` over the whole kept-resident prefix: a parse makes a fresh
/// instance for every guest call, and a `detect` call writes a
/// few pages of a memory over a MiB long. Older kernels keep the `memset`.
///
/// An instance lives only while its guest call runs (one per call of a
/// parse), so the live instances are bounded by the parses admitted at once
/// (admission keeps them below `MAX_LIVE_INSTANCES`) and the process's other
/// users (the CLI, component checks); past it, instantiation fails and the
/// parse answers `500 extractor_failed`. Each running call also holds one
/// of as many fiber stacks, whose first `STACK_KEEP_RESIDENT` bytes stay
/// resident across calls like the memories' prefix.
fn pooling(_limits: &SandboxLimits) -> PoolingAllocationConfig {
    const WASM32_MAX_MEMORY: usize = 1 << 32;
    const MAX_LIVE_INSTANCES: u32 = 1000;
    const KEEP_RESIDENT: usize = 4 << 20;
    const STACK_KEEP_RESIDENT: usize = 128 << 10;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(MAX_LIVE_INSTANCES)
        .total_stacks(MAX_LIVE_INSTANCES)
        .async_stack_keep_resident(STACK_KEEP_RESIDENT)
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
        .table_keep_resident(64 << 10)
        .pagemap_scan(wasmtime::Enabled::Auto);
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
        mediaparse_metrics::global().sandbox_kill(platform, reason);
    }
    RuntimeError::Guest {
        platform: platform.to_string(),
        message,
    }
}

fn output_too_large(platform: &str, what: &str, size: usize, limit: usize) -> RuntimeError {
    mediaparse_metrics::global().sandbox_kill(platform, "output_limit");
    RuntimeError::Guest {
        platform: platform.to_string(),
        message: format!("{what} output of {size} bytes is over the {limit}-byte cap"),
    }
}

/// One instance. Its calls are futures that run the guest on the polling
/// thread and yield to the thread's other tasks at every epoch tick, so a
/// long guest call shares its thread instead of holding it. Callers with no
/// async runtime drive them with [`run_blocking`].
pub struct Session {
    store: Store<GuestState>,
    guest: Guest,
    /// Calls into the guest so far (info, detect, plan, map, step).
    guest_calls: u32,
    platform: String,
    limits: SandboxLimits,
    _live: Live,
}

impl Drop for Session {
    /// The instance's memory growths, counted under its platform.
    fn drop(&mut self) {
        let grew = self.store.data().limits.grew;
        if grew > 0 {
            mediaparse_metrics::global().guest_memory_grows(&self.platform, grew);
        }
    }
}

impl Session {
    fn arm(&mut self) {
        self.guest_calls += 1;
        let state = self.store.data_mut();
        state.call_deadline = std::time::Instant::now() + self.limits.call_timeout;
        self.store.set_epoch_deadline(1);
    }

    /// Calls made into the guest by this session (each one a trip into the sandbox).
    pub fn guest_calls(&self) -> u32 {
        self.guest_calls
    }

    /// The WIT version the guest speaks: `"1.1"` or `"1.0"`.
    pub fn wit(&self) -> &'static str {
        match self.guest {
            Guest::V1_1(_) => "1.1",
            Guest::V1_0(_) => "1.0",
        }
    }

    /// Seal WASI to this parse before the guest sees its context: the
    /// context's time on every clock, randomness seeded from the parse. Done
    /// once per parse, so the random stream runs on across the parse's calls.
    fn seal(&mut self, target: &sdk::Target, ctx: &sdk::Context) {
        let seal = sealed::Seal::for_parse(target, ctx);
        let state = self.store.data_mut();
        if state.sealed_to.as_ref() != Some(&seal) {
            state.wasi = sealed::wasi(&seal);
            state.sealed_to = Some(seal);
        }
    }

    pub async fn info(&mut self) -> Result<sdk::Info, RuntimeError> {
        self.arm();
        let info = match &self.guest {
            Guest::V1_1(g) => g.call_info(&mut self.store).await.map(convert::v1_1::info),
            Guest::V1_0(g) => g.call_info(&mut self.store).await.map(convert::v1_0::info),
        };
        info.map_err(|e| guest_error(&self.platform, e))
    }

    pub async fn detect(
        &mut self,
        input: &str,
    ) -> Result<Result<sdk::Target, sdk::Failure>, RuntimeError> {
        self.arm();
        let out = match &self.guest {
            Guest::V1_1(g) => g.call_detect(&mut self.store, input).await.map(|o| {
                o.map(convert::v1_1::target_in)
                    .map_err(convert::v1_1::failure_in)
            }),
            Guest::V1_0(g) => g.call_detect(&mut self.store, input).await.map(|o| {
                o.map(convert::v1_0::target_in)
                    .map_err(convert::v1_0::failure_in)
            }),
        };
        out.map_err(|e| guest_error(&self.platform, e))
    }

    /// One round: the next requests or the finished extraction. A 1.1 guest
    /// answers in one `step` call, reading the last page once; a 1.0 guest
    /// is asked `plan`, then `map` when it is ready (two calls, two reads).
    pub async fn step(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<Round, sdk::Failure>, RuntimeError> {
        if let Guest::V1_0(_) = self.guest {
            return self.step_by_plan_and_map(target, ctx, done).await;
        }
        self.arm();
        self.seal(target, ctx);
        let (t, c, d) = (
            convert::v1_1::target_out(target),
            convert::v1_1::context_out(ctx),
            convert::v1_1::exchanges_out(done),
        );
        let out = match &self.guest {
            Guest::V1_1(g) => g.call_step(&mut self.store, &t, &c, &d).await,
            Guest::V1_0(_) => return self.step_by_plan_and_map(target, ctx, done).await,
        }
        .map_err(|e| guest_error(&self.platform, e))?;
        let stepped = match out {
            Ok(stepped) => stepped,
            Err(f) => return Ok(Err(convert::v1_1::failure_in(f))),
        };
        let remember: Vec<sdk::Memo> = stepped
            .remember
            .into_iter()
            .map(convert::v1_1::memo_in)
            .collect();
        let memo_bytes: usize = remember.iter().map(|m| m.key.len() + m.value.len()).sum();
        let next = convert::v1_1::step_in(stepped.next);
        let size = match &next {
            Next::Fetch(requests) => requests_size(requests),
            Next::Done(media, data) => data.len() + media_size(media),
        };
        self.check_output("step", size + memo_bytes)?;
        Ok(Ok(Round { next, remember }))
    }

    /// A 1.0 guest's round: `plan`, then `map` once it is ready.
    async fn step_by_plan_and_map(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<Round, sdk::Failure>, RuntimeError> {
        Ok(match self.plan(target, ctx, done).await? {
            Err(f) => Err(f),
            Ok(sdk::Plan::Fetch(requests)) => Ok(Round {
                next: Next::Fetch(requests),
                remember: Vec::new(),
            }),
            Ok(sdk::Plan::Ready) => self
                .map(target, ctx, done)
                .await?
                .map(|(media, data)| Round {
                    next: Next::Done(media, data),
                    remember: Vec::new(),
                }),
        })
    }

    fn check_output(&self, what: &str, size: usize) -> Result<(), RuntimeError> {
        if size > self.limits.max_output_bytes {
            return Err(output_too_large(
                &self.platform,
                what,
                size,
                self.limits.max_output_bytes,
            ));
        }
        Ok(())
    }

    pub async fn plan(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<sdk::Plan, sdk::Failure>, RuntimeError> {
        self.arm();
        self.seal(target, ctx);
        let out = match &self.guest {
            Guest::V1_1(g) => {
                let (t, c, d) = (
                    convert::v1_1::target_out(target),
                    convert::v1_1::context_out(ctx),
                    convert::v1_1::exchanges_out(done),
                );
                g.call_plan(&mut self.store, &t, &c, &d).await.map(|o| {
                    o.map(convert::v1_1::plan_in)
                        .map_err(convert::v1_1::failure_in)
                })
            }
            Guest::V1_0(g) => {
                let (t, c, d) = (
                    convert::v1_0::target_out(target),
                    convert::v1_0::context_out(ctx),
                    convert::v1_0::exchanges_out(done),
                );
                g.call_plan(&mut self.store, &t, &c, &d).await.map(|o| {
                    o.map(convert::v1_0::plan_in)
                        .map_err(convert::v1_0::failure_in)
                })
            }
        }
        .map_err(|e| guest_error(&self.platform, e))?;
        if let Ok(sdk::Plan::Fetch(requests)) = &out {
            self.check_output("plan", requests_size(requests))?;
        }
        Ok(out)
    }

    pub async fn map(
        &mut self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<Result<(sdk::Media, String), sdk::Failure>, RuntimeError> {
        self.arm();
        self.seal(target, ctx);
        let out = match &self.guest {
            Guest::V1_1(g) => {
                let (t, c, d) = (
                    convert::v1_1::target_out(target),
                    convert::v1_1::context_out(ctx),
                    convert::v1_1::exchanges_out(done),
                );
                g.call_map(&mut self.store, &t, &c, &d).await.map(|o| {
                    o.map(|x| (convert::v1_1::media_in(x.media), x.platform_data))
                        .map_err(convert::v1_1::failure_in)
                })
            }
            Guest::V1_0(g) => {
                let (t, c, d) = (
                    convert::v1_0::target_out(target),
                    convert::v1_0::context_out(ctx),
                    convert::v1_0::exchanges_out(done),
                );
                g.call_map(&mut self.store, &t, &c, &d).await.map(|o| {
                    o.map(|x| (convert::v1_0::media_in(x.media), x.platform_data))
                        .map_err(convert::v1_0::failure_in)
                })
            }
        }
        .map_err(|e| guest_error(&self.platform, e))?;
        if let Ok((media, data)) = &out {
            self.check_output("map", data.len() + media_size(media))?;
        }
        Ok(out)
    }
}

/// Bytes a list of requests carries (URL, body, headers).
fn requests_size(requests: &[sdk::HttpRequest]) -> usize {
    requests
        .iter()
        .map(|r| {
            r.url.len()
                + r.body.as_ref().map_or(0, Vec::len)
                + r.headers
                    .iter()
                    .map(|h| h.name.len() + h.value.len())
                    .sum::<usize>()
        })
        .sum()
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

/// The guest's WASI clocks and randomness, fixed by the parse: nothing an
/// extractor computes may depend on the wall clock or OS entropy, so a
/// replay of a recorded parse (same target, same context) is exact.
mod sealed {
    use std::time::Duration;

    use rand_wasi::{SeedableRng, rngs::StdRng};
    use sha2::{Digest, Sha256};
    use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder};

    use mediaparse_sdk as sdk;

    /// What WASI is sealed to: the context time and a seed drawn from the parse.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Seal {
        pub now_unix_ms: u64,
        pub seed: [u8; 32],
    }

    impl Seal {
        /// `info` and `detect` run before any context: time zero, and a seed
        /// from the platform alone.
        pub fn before_parse(platform: &str) -> Seal {
            Seal {
                now_unix_ms: 0,
                seed: seed(&[b"before-parse", platform.as_bytes()]),
            }
        }

        /// The parse's own seal: the context's time; the seed hashes the
        /// target and that time (not the operator config, which may hold secrets
        /// that must not steer anything observable).
        pub fn for_parse(target: &sdk::Target, ctx: &sdk::Context) -> Seal {
            Seal {
                now_unix_ms: ctx.now_unix_ms,
                seed: seed(&[
                    b"parse",
                    target.platform.as_bytes(),
                    target.id.as_bytes(),
                    target.canonical_url.as_bytes(),
                    &ctx.now_unix_ms.to_le_bytes(),
                ]),
            }
        }
    }

    fn seed(parts: &[&[u8]]) -> [u8; 32] {
        let mut hash = Sha256::new();
        for part in parts {
            // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hash.finalize().into()
    }

    /// A WASI context granting nothing, whose clocks read `seal`'s time and
    /// whose three random sources are streams from `seal`'s seed.
    pub fn wasi(seal: &Seal) -> WasiCtx {
        let derived = |label: &[u8]| seed(&[label, &seal.seed]);
        let insecure_seed = derived(b"insecure-seed");
        let mut low = [0u8; 16];
        low.copy_from_slice(&insecure_seed[..16]);
        let now = Duration::from_millis(seal.now_unix_ms);
        let mut builder = WasiCtxBuilder::new();
        builder
            .wall_clock(ContextClock(now))
            .monotonic_clock(ContextClock(now))
            .secure_random(StdRng::from_seed(derived(b"random")))
            .insecure_random(StdRng::from_seed(derived(b"insecure")))
            .insecure_random_seed(u128::from_le_bytes(low));
        builder.build()
    }

    /// A clock stopped at the context time: a guest reading it twice sees
    /// no time pass (its wall time is bounded by the epoch deadline instead).
    struct ContextClock(Duration);

    const RESOLUTION: Duration = Duration::from_millis(1);

    impl HostWallClock for ContextClock {
        fn resolution(&self) -> Duration {
            RESOLUTION
        }
        fn now(&self) -> Duration {
            self.0
        }
    }

    impl HostMonotonicClock for ContextClock {
        fn resolution(&self) -> u64 {
            RESOLUTION.as_nanos() as u64
        }
        fn now(&self) -> u64 {
            u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn target(id: &str) -> sdk::Target {
            sdk::Target {
                platform: "tiktok".into(),
                id: id.into(),
                canonical_url: format!("https://www.tiktok.com/@a/video/{id}"),
                input: String::new(),
            }
        }

        fn ctx(now_unix_ms: u64) -> sdk::Context {
            sdk::Context {
                now_unix_ms,
                config: Vec::new(),
                remembered: Vec::new(),
            }
        }

        #[test]
        fn a_parse_seals_to_its_time_and_a_seed_of_its_own() {
            let a = Seal::for_parse(&target("1"), &ctx(1_700_000_000_123));
            assert_eq!(a, Seal::for_parse(&target("1"), &ctx(1_700_000_000_123)));
            assert_eq!(a.now_unix_ms, 1_700_000_000_123);
            assert_ne!(
                a.seed,
                Seal::for_parse(&target("2"), &ctx(1_700_000_000_123)).seed
            );
            assert_ne!(
                a.seed,
                Seal::for_parse(&target("1"), &ctx(1_700_000_000_124)).seed
            );
            assert_ne!(a.seed, Seal::before_parse("tiktok").seed);
        }

        #[test]
        fn the_clocks_read_the_context_time() {
            let clock = ContextClock(Duration::from_millis(1_700_000_000_123));
            assert_eq!(
                HostWallClock::now(&clock),
                Duration::from_millis(1_700_000_000_123)
            );
            assert_eq!(HostMonotonicClock::now(&clock), 1_700_000_000_123_000_000);
        }
    }
}
