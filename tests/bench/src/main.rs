//! `cargo xtask bench`: what the service costs, measured in one run on this
//! machine (issue 9). Prints a table and writes JSON.
//!
//! 1. Extractor cost per platform: `map` on the platform's largest fixture,
//!    natively (SDK harness) and in wasm through the host's runtime.
//! 2. End to end vs. the floor: parses/s and latency at concurrency 1, 16 and
//!    64 against a loopback fake upstream serving the TikTok video page, and
//!    the raw fetch of that page with the same load tool and server.
//! 3. Memory: RSS of the service at rest and during concurrency 64.
//! 4. Start and swap: cold start of the binary; one component recompiled,
//!    checked and swapped in.
//!
//! `MEDIAPARSE_BIN` (a release build) and `MEDIAPARSE_EXTRACTORS` say what
//! to measure; `--quick` runs fewer iterations, `--json PATH` sets the output.

mod cluster;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mediaparse::registry::{Registry, Runtime, SandboxLimits};
use mediaparse_sdk::fixture::Case;
use mediaparse_sdk::{Context, Exchange, Extractor, Target};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

/// The page the end-to-end section parses and fetches raw.
const E2E_CASE: &str = "tiktok/fixtures/video_post";

struct Options {
    quick: bool,
    /// `extractors`, `e2e` or `start`: run one section (profiling).
    only: Option<String>,
    json: PathBuf,
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(|| paths::workspace_root().join("target/bench/bench.json"));
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    Options { quick, json, only }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let opts = options();
    let mut report = serde_json::Map::new();
    report.insert(
        "binary".into(),
        json!(paths::host_binary().display().to_string()),
    );
    report.insert("cores".into(), json!(num_cores()));

    let run = |section: &str| opts.only.as_deref().is_none_or(|o| o == section);
    let mut extractors = Vec::new();
    if run("extractors") {
        eprintln!("[1/4] extractor cost per platform");
        extractors = tokio::task::spawn_blocking({
            let quick = opts.quick;
            move || extractor_costs(quick)
        })
        .await??;
        report.insert("extractors".into(), Value::Array(extractors.clone()));
    }
    let (mut e2e, mut memory) = (Vec::new(), Value::Null);
    if run("e2e") {
        eprintln!("[2/4] end to end vs. the raw fetch, [3/4] memory");
        (e2e, memory) = end_to_end(opts.quick).await?;
        report.insert("end_to_end".into(), Value::Array(e2e.clone()));
        report.insert("memory".into(), memory.clone());
    }
    let mut start = Value::Null;
    if run("start") {
        eprintln!("[4/4] start and swap");
        start = start_and_swap(opts.quick).await?;
        report.insert("start".into(), start.clone());
    }

    let mut several = Vec::new();
    if run("cluster") {
        eprintln!("[+] several hosts: SQLite, PostgreSQL, three hosts on PostgreSQL");
        several = cluster::several_hosts(opts.quick).await?;
        report.insert("several_hosts".into(), Value::Array(several.clone()));
    }

    print_tables(&extractors, &e2e, &memory, &start);
    cluster::print(&several);
    if let Some(dir) = opts.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(
        &opts.json,
        serde_json::to_string_pretty(&Value::Object(report))?,
    )?;
    println!("\nJSON: {}", opts.json.display());
    Ok(())
}

fn num_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

// ---------------------------------------------------------------- 1. extractors

/// `map`'s inputs for the case with the most response bytes that maps.
type MapInputs = (Target, Context, Vec<Exchange>);

fn largest_case<E: Extractor>(platform: &str) -> anyhow::Result<(String, usize, MapInputs)> {
    let dir = paths::workspace_root()
        .join("extractors")
        .join(platform)
        .join("fixtures");
    let mut best: Option<(String, usize, MapInputs)> = None;
    for case in Case::load_all(&dir)? {
        let Some((target, ctx, done)) = mediaparse_sdk::replay::map_inputs::<E>(&case)? else {
            continue;
        };
        if E::map(&target, &ctx, &done).is_err() {
            continue;
        }
        let bytes: usize = done.iter().map(|e| e.response.body.len()).sum();
        if best.as_ref().is_none_or(|(_, b, _)| bytes > *b) {
            best = Some((case.name(), bytes, (target, ctx, done)));
        }
    }
    best.ok_or_else(|| anyhow::anyhow!("{platform}: no fixture case reaches map"))
}

/// Median of `f`'s wall time over enough runs (at least `min_runs`, ~`budget` in all).
fn median_time(min_runs: usize, budget: Duration, mut f: impl FnMut() -> Duration) -> Duration {
    for _ in 0..3 {
        f();
    }
    let started = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < min_runs || (started.elapsed() < budget && samples.len() < 10_000) {
        samples.push(f());
    }
    samples.sort();
    samples[samples.len() / 2]
}

fn cost<E: Extractor>(platform: &str, registry: &Registry, quick: bool) -> anyhow::Result<Value> {
    let (case, bytes, (target, ctx, done)) = largest_case::<E>(platform)?;
    let (runs, budget) = if quick {
        (10, Duration::from_millis(150))
    } else {
        (30, Duration::from_millis(800))
    };
    let native = median_time(runs, budget, || {
        let t = Instant::now();
        let out = E::map(&target, &ctx, &done);
        let d = t.elapsed();
        std::hint::black_box(out).ok();
        d
    });
    let wasm_file = paths::extractors_dir().join(format!("{platform}.wasm"));
    let ext = registry
        .load_file(&wasm_file)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    registry.install(ext);
    let ext = registry
        .get(platform)
        .ok_or_else(|| anyhow::anyhow!("{platform} not installed"))?;
    let mut failed = None;
    let instantiate = median_time(runs, budget, || {
        let t = Instant::now();
        let s = registry.session(&ext);
        let d = t.elapsed();
        drop(s);
        d
    });
    let wasm = median_time(runs, budget, || match registry.session(&ext) {
        Ok(mut session) => {
            let t = Instant::now();
            let out = session.map(&target, &ctx, &done);
            let d = t.elapsed();
            match out {
                Ok(Ok(_)) => {}
                Ok(Err(f)) => failed = Some(format!("failure {}", f.code())),
                Err(e) => failed = Some(e.to_string()),
            }
            d
        }
        Err(e) => {
            failed = Some(e.to_string());
            Duration::ZERO
        }
    });
    // The same call a second time in one instance: its linear memory is
    // already grown and touched. The gap to `wasm` is what a fresh instance
    // pays for memory (growth and first-touch page faults).
    let warm = median_time(runs, budget, || match registry.session(&ext) {
        Ok(mut session) => {
            let _ = session.map(&target, &ctx, &done);
            let t = Instant::now();
            let out = session.map(&target, &ctx, &done);
            let d = t.elapsed();
            std::hint::black_box(out).ok();
            d
        }
        Err(_) => Duration::ZERO,
    });
    if let Some(why) = failed {
        anyhow::bail!("{platform}/{case} in wasm: {why}");
    }
    let ratio = wasm.as_secs_f64() / native.as_secs_f64().max(1e-9);
    eprintln!(
        "  {platform:<12} {case:<32} {bytes:>8} B  native {:>8.1} µs  wasm {:>8.1} µs  ×{ratio:.2}  warm {:>8.1} µs  (+ instantiate {:.1} µs)",
        us(native),
        us(wasm),
        us(warm),
        us(instantiate)
    );
    Ok(json!({
        "platform": platform,
        "case": case,
        "response_bytes": bytes,
        "native_map_us": us(native),
        "wasm_map_us": us(wasm),
        "ratio": ratio,
        "wasm_warm_map_us": us(warm),
        "warm_ratio": us(warm) / us(native).max(1e-3),
        "instantiate_us": us(instantiate),
    }))
}

fn extractor_costs(quick: bool) -> anyhow::Result<Vec<Value>> {
    let registry = Registry::new(Runtime::new(SandboxLimits::default())?);
    // A component embeds its platform.toml; natively the SDK learns the
    // listed members from these registrations.
    for manifest in paths::bundled_catalogue().iter() {
        mediaparse_sdk::spec::register(manifest.as_ref().clone());
    }
    // One line per platform below: the native side links each extractor's
    // Rust type, and Cargo has no dependency globs (the wasm side takes
    // whatever is in target/extractors).
    use mediaparse_extractor_bilibili::Bilibili;
    use mediaparse_extractor_douyin::Douyin;
    use mediaparse_extractor_instagram::Instagram;
    use mediaparse_extractor_kuaishou::Kuaishou;
    use mediaparse_extractor_threads::Threads;
    use mediaparse_extractor_tiktok::TikTok;
    use mediaparse_extractor_toutiao::Toutiao;
    use mediaparse_extractor_twitter::Twitter;
    use mediaparse_extractor_weibo::Weibo;
    use mediaparse_extractor_xiaohongshu::Xiaohongshu;
    use mediaparse_extractor_youtube::YouTube;
    let r = &registry;
    Ok(vec![
        cost::<Bilibili>("bilibili", r, quick)?,
        cost::<Douyin>("douyin", r, quick)?,
        cost::<Instagram>("instagram", r, quick)?,
        cost::<Kuaishou>("kuaishou", r, quick)?,
        cost::<Threads>("threads", r, quick)?,
        cost::<TikTok>("tiktok", r, quick)?,
        cost::<Toutiao>("toutiao", r, quick)?,
        cost::<Twitter>("twitter", r, quick)?,
        cost::<Weibo>("weibo", r, quick)?,
        cost::<Xiaohongshu>("xiaohongshu", r, quick)?,
        cost::<YouTube>("youtube", r, quick)?,
    ])
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

// ---------------------------------------------------------------- 2. end to end

/// Latencies of one load run.
struct Run {
    latencies: Vec<Duration>,
    elapsed: Duration,
    errors: usize,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    fn pct(&self, p: f64) -> Duration {
        percentile(&self.latencies, p)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The load tool: `concurrency` clients, each sending its next request as soon
/// as the previous answer's body is read, until `total` requests are done.
async fn load(
    client: &reqwest::Client,
    request: Arc<dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync>,
    concurrency: usize,
    total: usize,
) -> Run {
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, request, next, errors) = (
            client.clone(),
            request.clone(),
            next.clone(),
            errors.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t = Instant::now();
                let ok = match request(&client).send().await {
                    Ok(r) => {
                        let ok = r.status().is_success();
                        r.bytes().await.is_ok() && ok
                    }
                    Err(_) => false,
                };
                mine.push(t.elapsed());
                if !ok {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            mine
        }));
    }
    let mut latencies = Vec::with_capacity(total);
    for t in tasks {
        latencies.extend(t.await.unwrap_or_default());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Run {
        latencies,
        elapsed,
        errors: errors.load(Ordering::Relaxed),
    }
}

fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

async fn end_to_end(quick: bool) -> anyhow::Result<(Vec<Value>, Value)> {
    let case = Case::load(&paths::workspace_root().join("extractors").join(E2E_CASE))?;
    let upstream = FakeUpstream::start(std::slice::from_ref(&case)).await?;
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        // Measure the parse path, not the default 600/min per-key limit
        // (with it, most of the thousands of requests here would be 429s).
        extra_args: vec!["--rate-limit".into(), "0".into()],
        ..Default::default()
    })
    .await?;
    service.add_credits("default", 1_000_000_000)?;
    let token = service.create_key(&[])?;
    let pid = service
        .id()
        .ok_or_else(|| anyhow::anyhow!("service has no pid"))?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()?;

    let exchange = case
        .exchanges
        .first()
        .ok_or_else(|| anyhow::anyhow!("{E2E_CASE} records no exchange"))?;
    let page = exchange.request.url.clone();
    let raw_url = format!(
        "{}/{}",
        upstream.base_url(),
        page.trim_start_matches("https://")
    );
    let raw_headers = exchange.request.headers.clone();
    let raw: Arc<dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync> =
        Arc::new(move |c: &reqwest::Client| {
            let mut b = c.get(&raw_url);
            for h in &raw_headers {
                b = b.header(&h.name, &h.value);
            }
            b
        });
    let parse_url = service.url("/api/v1/parse");
    let body = serde_json::to_vec(&json!({ "url": case.input }))?;
    let parse: Arc<dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync> =
        Arc::new(move |c: &reqwest::Client| {
            c.post(&parse_url)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .body(body.clone())
        });

    // Warm up both paths (connections, caches, the allocator) before measuring.
    load(&client, parse.clone(), 4, 100).await;
    load(&client, raw.clone(), 4, 100).await;
    let rest_kib = rss_kib(pid, "VmRSS:").unwrap_or(0);

    let mut rows = Vec::new();
    let mut peak_kib = 0;
    for concurrency in [1usize, 16, 64] {
        let total = if quick {
            (concurrency * 10).max(200)
        } else {
            (concurrency * 40).max(1000)
        };
        let raw_run = load(&client, raw.clone(), concurrency, total).await;
        // Sample the service's RSS while it is under this load.
        let sampling = Arc::new(AtomicBool::new(true));
        let peak = Arc::new(AtomicU64::new(0));
        let sampler = tokio::spawn({
            let (sampling, peak) = (sampling.clone(), peak.clone());
            async move {
                while sampling.load(Ordering::Relaxed) {
                    if let Some(k) = rss_kib(pid, "VmRSS:") {
                        peak.fetch_max(k, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        });
        let svc_run = load(&client, parse.clone(), concurrency, total).await;
        sampling.store(false, Ordering::Relaxed);
        let _ = sampler.await;
        if concurrency == 64 {
            peak_kib = peak.load(Ordering::Relaxed);
        }
        let ratio = svc_run.per_second() / raw_run.per_second();
        let overhead = |p: f64| us(svc_run.pct(p)) - us(raw_run.pct(p));
        eprintln!(
            "  c={concurrency:<3} service {:>7.0}/s p50 {:>8.0} µs p99 {:>8.0} µs | raw {:>7.0}/s p50 {:>6.0} µs p99 {:>6.0} µs | ratio {ratio:.2} errors {}+{}",
            svc_run.per_second(),
            us(svc_run.pct(0.5)),
            us(svc_run.pct(0.99)),
            raw_run.per_second(),
            us(raw_run.pct(0.5)),
            us(raw_run.pct(0.99)),
            svc_run.errors,
            raw_run.errors
        );
        rows.push(json!({
            "concurrency": concurrency,
            "requests": total,
            "service_per_s": svc_run.per_second(),
            "service_p50_us": us(svc_run.pct(0.5)),
            "service_p99_us": us(svc_run.pct(0.99)),
            "service_errors": svc_run.errors,
            "raw_per_s": raw_run.per_second(),
            "raw_p50_us": us(raw_run.pct(0.5)),
            "raw_p99_us": us(raw_run.pct(0.99)),
            "raw_errors": raw_run.errors,
            "ratio": ratio,
            "overhead_p50_us": overhead(0.5),
            "overhead_p99_us": overhead(0.99),
        }));
    }
    let hwm_kib = rss_kib(pid, "VmHWM:").unwrap_or(0);
    let memory = json!({
        "rest_rss_kib": rest_kib,
        "c64_peak_rss_kib": peak_kib,
        "high_water_kib": hwm_kib,
    });
    drop(service);
    Ok((rows, memory))
}

// ---------------------------------------------------------------- 4. start and swap

async fn start_and_swap(quick: bool) -> anyhow::Result<Value> {
    let runs = if quick { 2 } else { 5 };
    let mut starts = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let service = Service::start(ServiceOptions::default()).await?;
        starts.push(t.elapsed());
        drop(service);
    }
    starts.sort();
    let components = std::fs::read_dir(paths::extractors_dir())?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "wasm"))
        .count();
    // A hot swap of one component, as a reload does it: compile, check
    // (`info`, name, WIT major), then swap it in.
    let swap = tokio::task::spawn_blocking(|| -> anyhow::Result<Vec<Duration>> {
        let registry = Registry::new(Runtime::new(SandboxLimits::default())?);
        let file: PathBuf = paths::extractors_dir().join("tiktok.wasm");
        let mut out = Vec::new();
        for _ in 0..3 {
            out.push(swap_once(&registry, &file)?);
        }
        out.sort();
        Ok(out)
    })
    .await??;
    let median = starts[starts.len() / 2];
    eprintln!(
        "  cold start (no compiled cache on this branch, {components} components): median {:.0} ms over {runs}; swap tiktok.wasm {:.0} ms",
        median.as_secs_f64() * 1e3,
        swap[1].as_secs_f64() * 1e3
    );
    Ok(json!({
        "components": components,
        "cold_start_no_cache_ms": median.as_secs_f64() * 1e3,
        "cold_start_no_cache_min_ms": starts[0].as_secs_f64() * 1e3,
        "cold_start_with_cache_ms": Value::Null,
        "swap_one_component_ms": swap[1].as_secs_f64() * 1e3,
    }))
}

fn swap_once(registry: &Registry, file: &Path) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let ext = registry
        .load_file(file)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    registry.install(ext);
    Ok(t.elapsed())
}

// ---------------------------------------------------------------- the table

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

fn print_tables(extractors: &[Value], e2e: &[Value], memory: &Value, start: &Value) {
    println!("\n### Extractor cost: `map` on the largest fixture (median)\n");
    println!(
        "| platform | case | response bytes | native µs | wasm µs | wasm/native | wasm, 2nd call in the instance µs | 2nd/native | + instantiate µs |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for e in extractors {
        println!(
            "| {} | {} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2} | {:.1} |",
            e["platform"].as_str().unwrap_or(""),
            e["case"].as_str().unwrap_or(""),
            e["response_bytes"],
            f(e, "native_map_us"),
            f(e, "wasm_map_us"),
            f(e, "ratio"),
            f(e, "wasm_warm_map_us"),
            f(e, "warm_ratio"),
            f(e, "instantiate_us"),
        );
    }
    println!("\n### End to end vs. the raw fetch (TikTok video page, loopback)\n");
    println!(
        "| concurrency | service parses/s | raw fetches/s | service/raw | service p50 / p99 µs | raw p50 / p99 µs | host overhead p50 / p99 µs | errors |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in e2e {
        println!(
            "| {} | {:.0} | {:.0} | {:.2} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {} |",
            r["concurrency"],
            f(r, "service_per_s"),
            f(r, "raw_per_s"),
            f(r, "ratio"),
            f(r, "service_p50_us"),
            f(r, "service_p99_us"),
            f(r, "raw_p50_us"),
            f(r, "raw_p99_us"),
            f(r, "overhead_p50_us"),
            f(r, "overhead_p99_us"),
            r["service_errors"].as_u64().unwrap_or(0) + r["raw_errors"].as_u64().unwrap_or(0),
        );
    }
    println!("\n### Memory, start, swap\n");
    println!("| what | value |");
    println!("|---|---:|");
    println!(
        "| RSS at rest (after warm-up) | {:.1} MiB |",
        f(memory, "rest_rss_kib") / 1024.0
    );
    println!(
        "| RSS peak at concurrency 64 | {:.1} MiB |",
        f(memory, "c64_peak_rss_kib") / 1024.0
    );
    println!(
        "| cold start to listening, {} components, no compiled cache | {:.0} ms |",
        start["components"],
        f(start, "cold_start_no_cache_ms")
    );
    println!("| cold start with compiled cache | not on this branch |");
    println!(
        "| swap one component (compile + check + install) | {:.0} ms |",
        f(start, "swap_one_component_ms")
    );
}
