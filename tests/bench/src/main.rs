//! `cargo xtask bench`: what the service costs, measured in one run on this
//! machine. Prints a table and writes JSON.
//!
//! 1. Extractor cost per platform: `map` on the platform's largest fixture,
//!    natively (SDK harness) and in wasm through the host's runtime.
//! 2. End to end vs. the floor: parses/s and latency at concurrency 1, 16 and
//!    64 against a loopback fake upstream serving the TikTok video page, and
//!    the raw fetch of that page with the same load tool and server; and
//!    how many charges each SQLite fsync carried (the store's commit
//!    counters in `/metrics`).
//! 3. Memory: RSS of the service at rest and during concurrency 64.
//! 4. Start and swap: start to listening without and with a warm compiled
//!    cache; `mediaparse detect URL`; one component recompiled, checked and
//!    swapped in.
//!
//! A load run with any failed request (non-2xx, 429 included, or a transport
//! error) stops the bench with the counts: no table is printed from it.
//!
//! 5. Egress: one parse's latency through the browser backend vs. rustls
//!    (`egress.rs`).
//!
//! `MEDIAPARSE_BIN` (a release build) and `MEDIAPARSE_EXTRACTORS` say what
//! to measure; `--quick` runs fewer iterations, `--json PATH` sets the output,
//! `--only SECTION` runs one section and `--platform ID` one platform's row
//! of the extractor section.

use std::collections::BTreeMap;
mod cluster;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mediaparse::registry::{Registry, Runtime, SandboxLimits, run_blocking};
use mediaparse_sdk::fixture::Case;
use mediaparse_sdk::{Context, Exchange, Extractor, Target};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

mod console;
mod egress;
mod tunnel;
mod youtube;
mod ytdlp;

/// The page the end-to-end section parses and fetches raw.
const E2E_CASE: &str = "tiktok/fixtures/video_post";

struct Options {
    quick: bool,
    /// `extractors`, `e2e`, `start` or `egress`: run one section (profiling).
    only: Option<String>,
    /// One platform's row of the extractor section (profiling one guest).
    platform: Option<String>,
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
    let platform = args
        .iter()
        .position(|a| a == "--platform")
        .and_then(|i| args.get(i + 1))
        .cloned();
    Options {
        quick,
        json,
        only,
        platform,
    }
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
            let platform = opts.platform.clone();
            move || extractor_costs(quick, platform.as_deref())
        })
        .await??;
        report.insert("extractors".into(), Value::Array(extractors.clone()));
    }
    if run("youtube") {
        let quick = opts.quick;
        let row = tokio::task::spawn_blocking(move || youtube::challenges(quick)).await??;
        report.insert("youtube_challenges".into(), row);
    }
    let (mut e2e, mut memory, mut ytdlp_row) = (Vec::new(), Value::Null, Value::Null);
    if run("e2e") {
        eprintln!("[2/4] end to end vs. the raw fetch, [3/4] memory");
        (e2e, memory) = end_to_end(opts.quick).await?;
        report.insert("end_to_end".into(), Value::Array(e2e.clone()));
        report.insert("memory".into(), memory.clone());
        eprintln!("[2b/4] yt-dlp on the same page");
        let versus = versus_ytdlp(&e2e, &extractors, opts.quick).await?;
        report.insert("ytdlp".into(), versus.clone());
        ytdlp_row = versus;
    }
    let mut start = Value::Null;
    if run("start") {
        eprintln!("[4/4] start and swap");
        start = start_and_swap(opts.quick).await?;
        report.insert("start".into(), start.clone());
    }

    if run("tunnel") {
        eprintln!("[tunnel] 1 GiB through the media tunnel vs. direct, RSS growth");
        let t = tunnel::run(opts.quick).await?;
        report.insert("tunnel".into(), t);
    }
    let mut egress_rows = Vec::new();
    if run("egress") {
        eprintln!("[egress] parse latency: browser backend vs. rustls");
        egress_rows = egress::latency(opts.quick).await?;
        report.insert("egress".into(), Value::Array(egress_rows.clone()));
    }

    if run("console") {
        eprintln!("[console] page render times and weights");
        report.insert("console".into(), console::measure(opts.quick).await?);
    }

    let mut several = Vec::new();
    if run("cluster") {
        eprintln!("[+] several hosts: SQLite, PostgreSQL, three hosts on PostgreSQL");
        several = cluster::several_hosts(opts.quick).await?;
        report.insert("several_hosts".into(), Value::Array(several.clone()));
    }

    print_tables(&extractors, &e2e, &memory, &start);
    print_versus(&ytdlp_row);
    if let Some(t) = report.get("tunnel") {
        tunnel::print_table(t);
    }
    egress::print_table(&egress_rows);
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
        let s = run_blocking(registry.session(&ext));
        let d = t.elapsed();
        drop(s);
        d
    });
    let wasm = median_time(runs, budget, || {
        match run_blocking(registry.session(&ext)) {
            Ok(mut session) => {
                let t = Instant::now();
                let out = run_blocking(session.map(&target, &ctx, &done));
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
        }
    });
    // The same call a second time in one instance: its linear memory is
    // already grown and touched. The gap to `wasm` is what a fresh instance
    // pays for memory (growth and first-touch page faults).
    let warm = median_time(runs, budget, || {
        match run_blocking(registry.session(&ext)) {
            Ok(mut session) => {
                let _ = run_blocking(session.map(&target, &ctx, &done));
                let t = Instant::now();
                let out = run_blocking(session.map(&target, &ctx, &done));
                let d = t.elapsed();
                std::hint::black_box(out).ok();
                d
            }
            Err(_) => Duration::ZERO,
        }
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

fn extractor_costs(quick: bool, platform: Option<&str>) -> anyhow::Result<Vec<Value>> {
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
    type Cost = fn(&str, &Registry, bool) -> anyhow::Result<Value>;
    let platforms: [(&str, Cost); 11] = [
        ("bilibili", cost::<Bilibili>),
        ("douyin", cost::<Douyin>),
        ("instagram", cost::<Instagram>),
        ("kuaishou", cost::<Kuaishou>),
        ("threads", cost::<Threads>),
        ("tiktok", cost::<TikTok>),
        ("toutiao", cost::<Toutiao>),
        ("twitter", cost::<Twitter>),
        ("weibo", cost::<Weibo>),
        ("xiaohongshu", cost::<Xiaohongshu>),
        ("youtube", cost::<YouTube>),
    ];
    if let Some(wanted) = platform
        && !platforms.iter().any(|(name, _)| *name == wanted)
    {
        anyhow::bail!("--platform {wanted}: not a bundled platform");
    }
    platforms
        .iter()
        .filter(|(name, _)| platform.is_none_or(|wanted| wanted == *name))
        .map(|(name, cost)| cost(name, &registry, quick))
        .collect()
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

// ---------------------------------------------------------------- 2. end to end

/// Latencies of one load run.
struct Run {
    latencies: Vec<Duration>,
    elapsed: Duration,
    /// Failed requests by what failed: the HTTP status, or `transport`.
    failures: BTreeMap<String, usize>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    fn pct(&self, p: f64) -> Duration {
        percentile(&self.latencies, p)
    }

    /// An error naming every failure, if there was one: the bench never
    /// prints a table from a run whose requests did not all succeed.
    fn check(&self, what: &str) -> anyhow::Result<()> {
        if self.failures.is_empty() {
            return Ok(());
        }
        let counts: Vec<String> = self
            .failures
            .iter()
            .map(|(k, n)| format!("{n} × {k}"))
            .collect();
        anyhow::bail!(
            "{what}: {} of {} requests failed ({}); no table from a failing run",
            self.failures.values().sum::<usize>(),
            self.latencies.len(),
            counts.join(", ")
        )
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
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, request, next) = (client.clone(), request.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            let mut failures = BTreeMap::<String, usize>::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t = Instant::now();
                let failed = match request(&client).send().await {
                    Ok(r) => {
                        let status = r.status();
                        match r.bytes().await {
                            Ok(_) if status.is_success() => None,
                            Ok(_) => Some(status.as_u16().to_string()),
                            Err(_) => Some("transport".to_string()),
                        }
                    }
                    Err(_) => Some("transport".to_string()),
                };
                mine.push(t.elapsed());
                if let Some(what) = failed {
                    *failures.entry(what).or_default() += 1;
                }
            }
            (mine, failures)
        }));
    }
    let mut latencies = Vec::with_capacity(total);
    let mut failures = BTreeMap::new();
    for t in tasks {
        match t.await {
            Ok((mine, theirs)) => {
                latencies.extend(mine);
                for (k, n) in theirs {
                    *failures.entry(k).or_default() += n;
                }
            }
            Err(_) => {
                *failures
                    .entry("load task panicked".to_string())
                    .or_default() += 1
            }
        }
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Run {
        latencies,
        elapsed,
        failures,
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

/// The operator token of the end-to-end service (for its `/metrics`).
const OPERATOR_TOKEN: &str = "the-bench-operator-token-of-at-least-32-bytes";

/// The service's SQLite commit counters from `/metrics`: (groups, writes).
async fn store_commits(client: &reqwest::Client, service: &Service) -> anyhow::Result<(f64, f64)> {
    let text = client
        .get(service.url("/metrics"))
        .bearer_auth(OPERATOR_TOKEN)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    let counter = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<f64>().ok())
            .ok_or_else(|| anyhow::anyhow!("{name} is not in /metrics"))
    };
    Ok((
        counter("mediaparse_store_commit_groups_total")?,
        counter("mediaparse_store_commit_writes_total")?,
    ))
}

async fn end_to_end(quick: bool) -> anyhow::Result<(Vec<Value>, Value)> {
    let case = Case::load(&paths::workspace_root().join("extractors").join(E2E_CASE))?;
    let upstream = FakeUpstream::start(std::slice::from_ref(&case)).await?;
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        // Measure the parse path, not the default 600/min per-key limit
        // (with it, most of the thousands of requests here would be 429s).
        // No compiled cache: the service compiles every component at start,
        // as it does on a new binary, so the RSS at rest below is the worst
        // case rather than whatever the cache held.
        extra_args: vec![
            "--rate-limit".into(),
            "0".into(),
            "--compiled-cache".into(),
            "off".into(),
        ],
        // For `/metrics`: the store's commit counters.
        admin_token: Some(OPERATOR_TOKEN.into()),
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
    // Every parse of one post: `no-cache` makes each one extract (the rows
    // below); without it they are parse-cache hits (the cache-hit row).
    let parse_request = move |cache_control: &'static str| -> Arc<
        dyn Fn(&reqwest::Client) -> reqwest::RequestBuilder + Send + Sync,
    > {
        let (parse_url, token, body) = (parse_url.clone(), token.clone(), body.clone());
        Arc::new(move |c: &reqwest::Client| {
            c.post(&parse_url)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .header("cache-control", cache_control)
                .body(body.clone())
        })
    };
    let parse = parse_request("no-cache");
    let cached = parse_request("max-age=60");

    // Warm up both paths (connections, caches, the allocator) before measuring.
    load(&client, parse.clone(), 4, 100)
        .await
        .check("warm-up parses")?;
    load(&client, raw.clone(), 4, 100)
        .await
        .check("warm-up raw fetches")?;
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
        raw_run.check(&format!("raw fetches at concurrency {concurrency}"))?;
        let cpu_before = ytdlp::process_cpu_s(pid);
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
        let commits_before = store_commits(&client, &service).await?;
        let svc_run = load(&client, parse.clone(), concurrency, total).await;
        let cpu_after = ytdlp::process_cpu_s(pid);
        let commits_after = store_commits(&client, &service).await?;
        // Every parse here is charged: the charges each SQLite fsync carried.
        let (groups, writes) = (
            commits_after.0 - commits_before.0,
            commits_after.1 - commits_before.1,
        );
        let per_fsync = writes / groups;
        sampling.store(false, Ordering::Relaxed);
        let _ = sampler.await;
        svc_run.check(&format!("parses at concurrency {concurrency}"))?;
        // The service's own CPU (user + system) per parse under this load.
        let cpu_us = match (cpu_before, cpu_after) {
            (Some(a), Some(b)) => (b - a) * 1e6 / svc_run.latencies.len() as f64,
            _ => f64::NAN,
        };
        if concurrency == 64 {
            peak_kib = peak.load(Ordering::Relaxed);
            eprintln!(
                "  charges per fsync at c=64: {per_fsync:.1} ({writes} writes in {groups} commits)"
            );
        }
        let ratio = svc_run.per_second() / raw_run.per_second();
        let overhead = |p: f64| us(svc_run.pct(p)) - us(raw_run.pct(p));
        eprintln!(
            "  c={concurrency:<3} service {:>7.0}/s p50 {:>8.0} µs p99 {:>8.0} µs cpu {cpu_us:>6.0} µs/parse | raw {:>7.0}/s p50 {:>6.0} µs p99 {:>6.0} µs | ratio {ratio:.2}",
            svc_run.per_second(),
            us(svc_run.pct(0.5)),
            us(svc_run.pct(0.99)),
            raw_run.per_second(),
            us(raw_run.pct(0.5)),
            us(raw_run.pct(0.99)),
        );
        rows.push(json!({
            "concurrency": concurrency,
            "requests": total,
            "service_per_s": svc_run.per_second(),
            "service_p50_us": us(svc_run.pct(0.5)),
            "service_p99_us": us(svc_run.pct(0.99)),
            "service_cpu_us_per_parse": cpu_us,
            "raw_per_s": raw_run.per_second(),
            "raw_p50_us": us(raw_run.pct(0.5)),
            "raw_p99_us": us(raw_run.pct(0.99)),
            "ratio": ratio,
            "overhead_p50_us": overhead(0.5),
            "overhead_p99_us": overhead(0.99),
            "charges_per_fsync": per_fsync,
        }));
    }
    // Parse-cache hits: the same post again, no `no-cache`. Each is still
    // authenticated, detected and charged.
    for concurrency in [1usize, 64] {
        let total = if quick { 400 } else { 2000 };
        let cpu_before = ytdlp::process_cpu_s(pid);
        let hits = load(&client, cached.clone(), concurrency, total).await;
        let cpu_after = ytdlp::process_cpu_s(pid);
        hits.check(&format!("cache hits at concurrency {concurrency}"))?;
        // The service's own CPU (user + system) per hit.
        let cpu_us = match (cpu_before, cpu_after) {
            (Some(a), Some(b)) => (b - a) * 1e6 / hits.latencies.len() as f64,
            _ => f64::NAN,
        };
        eprintln!(
            "  cache hits c={concurrency:<3} {:>7.0}/s p50 {:>8.0} µs p99 {:>8.0} µs cpu {cpu_us:>6.0} µs/hit",
            hits.per_second(),
            us(hits.pct(0.5)),
            us(hits.pct(0.99))
        );
        rows.push(json!({
            "concurrency": concurrency,
            "cache_hits": true,
            "requests": total,
            "service_per_s": hits.per_second(),
            "service_p50_us": us(hits.pct(0.5)),
            "service_p99_us": us(hits.pct(0.99)),
            "service_cpu_us_per_parse": cpu_us,
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

/// Median wall time of `runs` service starts (to `listening on`) with `args`.
async fn start_median(runs: usize, args: &[String]) -> anyhow::Result<Duration> {
    let mut starts = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let service = Service::start(ServiceOptions {
            extra_args: args.to_vec(),
            ..Default::default()
        })
        .await?;
        starts.push(t.elapsed());
        drop(service);
    }
    starts.sort();
    Ok(starts[starts.len() / 2])
}

/// Median wall time of `mediaparse detect URL` (a whole process) with a warm cache.
fn detect_median(runs: usize, cache: &Path) -> anyhow::Result<Duration> {
    let url = "https://www.tiktok.com/@vantoan___/video/7305827432509082913";
    let mut times = Vec::new();
    for _ in 0..runs + 1 {
        let t = Instant::now();
        let out = std::process::Command::new(paths::host_binary())
            .args(["detect", url, "--extractors"])
            .arg(paths::extractors_dir())
            .arg("--compiled-cache")
            .arg(cache)
            .output()?;
        times.push(t.elapsed());
        anyhow::ensure!(
            out.status.success(),
            "mediaparse detect failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The first run fills the cache for this process's engine settings.
    times.remove(0);
    times.sort();
    Ok(times[times.len() / 2])
}

async fn start_and_swap(quick: bool) -> anyhow::Result<Value> {
    let runs = if quick { 2 } else { 5 };
    let cache = tempfile::tempdir()?;
    let cache_dir = cache.path().join("cwasm");
    let no_cache = start_median(runs, &["--compiled-cache".into(), "off".into()]).await?;
    let with_cache_args = vec![
        "--compiled-cache".to_string(),
        cache_dir.display().to_string(),
    ];
    // One start fills the cache; the measured ones find it warm.
    start_median(1, &with_cache_args).await?;
    let warm = start_median(runs, &with_cache_args).await?;
    let detect = tokio::task::spawn_blocking({
        let cache_dir = cache_dir.clone();
        move || detect_median(if quick { 3 } else { 9 }, &cache_dir)
    })
    .await??;
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
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    eprintln!(
        "  start to listening, {components} components: no compiled cache {:.0} ms, warm cache {:.0} ms; detect {:.0} ms; swap tiktok.wasm {:.0} ms",
        ms(no_cache),
        ms(warm),
        ms(detect),
        ms(swap[1])
    );
    Ok(json!({
        "components": components,
        "start_no_cache_ms": ms(no_cache),
        "start_warm_cache_ms": ms(warm),
        "detect_warm_cache_ms": ms(detect),
        "swap_one_component_ms": ms(swap[1]),
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

// ---------------------------------------------------------------- 2b. yt-dlp

/// yt-dlp's CPU per extraction of the end-to-end page beside the service's
/// CPU per parse at concurrency 1 (the whole request: HTTP, auth, fetch,
/// guest, charge) and the TikTok extractor's own wasm cost (section 1).
async fn versus_ytdlp(e2e: &[Value], extractors: &[Value], quick: bool) -> anyhow::Result<Value> {
    let case_dir = paths::workspace_root().join("extractors").join(E2E_CASE);
    let case = Case::load(&case_dir)?;
    let page = case_dir.join("page.html");
    let input = case.input.clone();
    let yt =
        tokio::task::spawn_blocking(move || ytdlp::cpu_per_parse(&page, &input, quick)).await??;
    let service = e2e
        .iter()
        .find(|r| r["concurrency"] == 1 && r["cache_hits"] != true)
        .map(|r| f(r, "service_cpu_us_per_parse"))
        .unwrap_or(f64::NAN);
    let wasm = extractors
        .iter()
        .find(|e| e["platform"] == "tiktok")
        .map(|e| f(e, "wasm_map_us"))
        .unwrap_or(f64::NAN);
    eprintln!(
        "  yt-dlp {} {:.0} µs CPU/parse ({} runs) | service {service:.0} µs (×{:.1}) | tiktok wasm step {wasm:.0} µs (×{:.1})",
        yt.version,
        yt.cpu_us_per_parse,
        yt.runs,
        yt.cpu_us_per_parse / service,
        yt.cpu_us_per_parse / wasm
    );
    Ok(json!({
        "version": yt.version,
        "pin": ytdlp::PIN,
        "ytdlp_cpu_us_per_parse": yt.cpu_us_per_parse,
        "service_cpu_us_per_parse": service,
        "ratio_service": yt.cpu_us_per_parse / service,
        "tiktok_wasm_us": wasm,
        "ratio_extractor": yt.cpu_us_per_parse / wasm,
    }))
}

fn print_versus(v: &Value) {
    if v.is_null() {
        return;
    }
    println!(
        "\n### CPU per parse against yt-dlp {} (same page, no network)\n",
        v["version"].as_str().unwrap_or("")
    );
    println!("| what | CPU µs per parse | yt-dlp / this (target ≥ 50) |");
    println!("|---|---:|---:|");
    println!(
        "| yt-dlp TikTokIE extraction of the saved page | {:.0} | 1.0 |",
        f(v, "ytdlp_cpu_us_per_parse")
    );
    println!(
        "| service, whole request at concurrency 1 (HTTP, auth, fetch, guest, charge) | {:.0} | {:.1} |",
        f(v, "service_cpu_us_per_parse"),
        f(v, "ratio_service")
    );
    println!(
        "| TikTok extractor alone (wasm, section 1) | {:.0} | {:.1} |",
        f(v, "tiktok_wasm_us"),
        f(v, "ratio_extractor")
    );
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
        "| concurrency | service parses/s | raw fetches/s | service/raw | service p50 / p99 µs | raw p50 / p99 µs | host overhead p50 / p99 µs | service CPU µs/parse |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in e2e.iter().filter(|r| r["cache_hits"] != true) {
        println!(
            "| {} | {:.0} | {:.0} | {:.2} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} |",
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
            f(r, "service_cpu_us_per_parse"),
        );
    }
    println!(
        "\n### Parse-cache hits (same post, no `no-cache`; still authenticated, detected, charged)\n"
    );
    println!("| concurrency | parses/s | p50 / p99 µs | service CPU µs/hit |");
    println!("|---:|---:|---:|---:|");
    for r in e2e.iter().filter(|r| r["cache_hits"] == true) {
        println!(
            "| {} | {:.0} | {:.0} / {:.0} | {:.0} |",
            r["concurrency"],
            f(r, "service_per_s"),
            f(r, "service_p50_us"),
            f(r, "service_p99_us"),
            f(r, "service_cpu_us_per_parse"),
        );
    }
    println!("\n### Memory, start, swap\n");
    println!("| what | value |");
    println!("|---|---:|");
    println!(
        "| RSS at rest (after compiling every component, and a warm-up) | {:.1} MiB |",
        f(memory, "rest_rss_kib") / 1024.0
    );
    println!(
        "| RSS peak at concurrency 64 | {:.1} MiB |",
        f(memory, "c64_peak_rss_kib") / 1024.0
    );
    println!(
        "| `serve` to listening, {} components, no compiled cache | {:.0} ms |",
        start["components"],
        f(start, "start_no_cache_ms")
    );
    println!(
        "| `serve` to listening, warm compiled cache (target ≤ 500 ms) | {:.0} ms |",
        f(start, "start_warm_cache_ms")
    );
    println!(
        "| `mediaparse detect URL`, warm compiled cache (target ≤ 100 ms) | {:.0} ms |",
        f(start, "detect_warm_cache_ms")
    );
    println!(
        "| swap one component (compile + check + install) | {:.0} ms |",
        f(start, "swap_one_component_ms")
    );
}
