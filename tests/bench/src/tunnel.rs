//! The tunnel's bench rows: throughput of a 1 GiB file fetched
//! through the tunnel vs. fetched directly from the same loopback fake CDN
//! (target ≥ 0.8×), and the service's RSS growth while it streams (target
//! < 16 MiB). The file is sparse (made with `set_len`, read from disk as it
//! is sent), so neither side holds it in memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mediaparse_sdk::Header;
use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_cdn::{Answer, CdnFile, FakeCdn, Source, replay_routes};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const FILE_BYTES: u64 = 1 << 30;

/// A parse whose media need a Referer (Bilibili DASH).
const CASE: &str = "bilibili/fixtures/video_dash_primary";

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Read `url` to its end; returns (bytes, seconds).
async fn fetch(
    client: &reqwest::Client,
    url: &str,
    headers: &[Header],
) -> anyhow::Result<(u64, f64)> {
    let started = Instant::now();
    let mut request = client.get(url);
    for h in headers {
        request = request.header(&h.name, &h.value);
    }
    let mut resp = request.send().await?;
    anyhow::ensure!(resp.status().is_success(), "{url}: {}", resp.status());
    let mut n = 0u64;
    while let Some(chunk) = resp.chunk().await? {
        n += chunk.len() as u64;
    }
    Ok((n, started.elapsed().as_secs_f64()))
}

pub async fn run(quick: bool) -> anyhow::Result<Value> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("one-gib.bin");
    std::fs::File::create(&file)?.set_len(FILE_BYTES)?;

    let case = Case::load(&paths::workspace_root().join("extractors").join(CASE))?;
    let upstream = FakeUpstream::with_routes(replay_routes(std::slice::from_ref(&case))?).await?;
    let cdn = FakeCdn::start(Some(upstream.base_url())).await?;
    let service = Service::start(ServiceOptions {
        upstream: Some(cdn.base_url()),
        ..Default::default()
    })
    .await?;
    service.add_credits("default", 100)?;
    let token = service.create_key(&["--rate-limit", "off"])?;
    let client = reqwest::Client::new();
    let mut media = Vec::new();
    for query in ["", "?delivery=tunnel"] {
        let body: Value = client
            .post(service.url(&format!("/api/v1/parse{query}")))
            .bearer_auth(&token)
            .json(&json!({"url": case.input}))
            .send()
            .await?
            .json()
            .await?;
        media.push(body["data"]["videos"][0].clone());
    }
    let direct_url = media[0]["url"].as_str().unwrap_or_default().to_string();
    let referer = Header::new(
        "referer",
        media[0]["headers"]["Referer"].as_str().unwrap_or_default(),
    );
    let tunnel_url = media[1]["url"].as_str().unwrap_or_default().to_string();
    let mut cdn_file = CdnFile::new(Source::File(file.clone()), "video/mp4");
    cdn_file.required = vec![referer.clone()];
    cdn.add(&direct_url, Answer::File(cdn_file));
    let wire = cdn.wire_url(&direct_url);

    let pid = service
        .id()
        .ok_or_else(|| anyhow::anyhow!("service exited"))?;
    // Warm both paths (connections, allocator) on a small range first.
    for (url, headers) in [(&wire, vec![referer.clone()]), (&tunnel_url, vec![])] {
        let mut h = headers;
        h.push(Header::new("range", "bytes=0-1048575"));
        fetch(&client, url, &h).await?;
    }
    let rounds = if quick { 1 } else { 3 };
    let (mut direct_best, mut tunnel_best) = (f64::MAX, f64::MAX);
    let mut rss_growth_kib = 0u64;
    let rest_kib = rss_kib(pid).unwrap_or(0);
    for _ in 0..rounds {
        let (n, secs) = fetch(&client, &wire, std::slice::from_ref(&referer)).await?;
        anyhow::ensure!(n == FILE_BYTES, "direct read {n} bytes");
        direct_best = direct_best.min(secs);

        let before = rss_kib(pid).unwrap_or(0);
        let peak = Arc::new(AtomicU64::new(before));
        let sampling = tokio::spawn({
            let peak = peak.clone();
            async move {
                loop {
                    peak.fetch_max(rss_kib(pid).unwrap_or(0), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
        let result = fetch(&client, &tunnel_url, &[]).await;
        sampling.abort();
        let peak = peak.load(Ordering::Relaxed).max(rss_kib(pid).unwrap_or(0));
        let (n, secs) = result?;
        anyhow::ensure!(n == FILE_BYTES, "tunnel read {n} bytes");
        tunnel_best = tunnel_best.min(secs);
        rss_growth_kib = rss_growth_kib.max(peak.saturating_sub(before));
    }
    let mib = FILE_BYTES as f64 / (1024.0 * 1024.0);
    Ok(json!({
        "file_bytes": FILE_BYTES,
        "rounds": rounds,
        "direct_mib_per_s": mib / direct_best,
        "tunnel_mib_per_s": mib / tunnel_best,
        "ratio": direct_best / tunnel_best,
        "rss_rest_kib": rest_kib,
        "rss_growth_kib": rss_growth_kib,
    }))
}

pub fn print_table(t: &Value) {
    let f = |k: &str| t[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "\n### Media tunnel: 1 GiB from a loopback fake CDN (best of {})\n",
        t["rounds"]
    );
    println!("| what | value | target |");
    println!("|---|---:|---|");
    println!("| direct fetch | {:.0} MiB/s | |", f("direct_mib_per_s"));
    println!(
        "| through the tunnel | {:.0} MiB/s | |",
        f("tunnel_mib_per_s")
    );
    println!("| tunnel / direct | {:.2} | ≥ 0.8 |", f("ratio"));
    println!(
        "| service RSS growth while streaming | {:.1} MiB (at rest {:.1} MiB) | < 16 MiB |",
        f("rss_growth_kib") / 1024.0,
        f("rss_rest_kib") / 1024.0
    );
}
