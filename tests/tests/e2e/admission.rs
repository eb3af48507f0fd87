//! Admission control (issue 19, item 2): parses in flight are bounded
//! overall and per account; past the bounds and a short wait a parse answers
//! `503 overloaded` with `Retry-After`, never `500` from a full instance pool.
//! A slow upstream on loopback holds each admitted parse (and its instance).

use std::collections::BTreeMap;
use std::time::Duration;

use mediaparse_tests::faults::{Fault, FaultyUpstream};
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const SLOW_POST: &str = "7000000000000000001";

async fn start(upstream: &FaultyUpstream, args: &[&str]) -> (Service, String) {
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        extra_env: vec![("MEDIAPARSE_UPSTREAM_TIMEOUT_MS".into(), "20000".into())],
        extra_args: args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000_000).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    (service, token)
}

/// `n` parses at once; per (status, code): how many, and whether every 503
/// carried `Retry-After`.
async fn burst(service: &Service, token: &str, n: usize) -> (BTreeMap<(u16, String), usize>, bool) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let url = format!("https://www.tiktok.com/@slow/video/{SLOW_POST}");
    let mut tasks = Vec::new();
    for _ in 0..n {
        let req = client
            .post(service.url("/api/v1/parse"))
            .bearer_auth(token)
            .json(&json!({ "url": url }));
        tasks.push(tokio::spawn(async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let retry_after = resp.headers().get("retry-after").is_some();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            let code = body["code"].as_str().unwrap_or("").to_string();
            (status, code, retry_after)
        }));
    }
    let mut counts = BTreeMap::new();
    let mut retry_after_on_503 = true;
    for task in tasks {
        let (status, code, retry_after) = task.await.unwrap();
        if status == 503 {
            retry_after_on_503 &= retry_after;
        }
        *counts.entry((status, code)).or_insert(0) += 1;
    }
    (counts, retry_after_on_503)
}

fn count(counts: &BTreeMap<(u16, String), usize>, status: u16, code: &str) -> usize {
    counts
        .get(&(status, code.to_string()))
        .copied()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_the_bounds_parses_answer_503_overloaded_with_retry_after() {
    let upstream = FaultyUpstream::start(vec![(
        SLOW_POST.into(),
        Fault::Slow(Duration::from_secs(3)),
    )])
    .await
    .unwrap();
    let (service, token) = start(
        &upstream,
        &[
            "--max-parses",
            "4",
            "--max-parses-per-account",
            "100",
            "--parse-queue",
            "4",
            "--parse-queue-wait-ms",
            "500",
        ],
    )
    .await;
    let (counts, retry_after) = burst(&service, &token, 20).await;
    eprintln!("20 parses, 4 in flight, queue 4: {counts:?}");
    let overloaded = count(&counts, 503, "overloaded");
    // 4 admitted; the other 16 queue (4 of them, 500 ms) or are refused at once.
    assert_eq!(overloaded, 16, "{counts:?}");
    assert!(retry_after, "a 503 without Retry-After: {counts:?}");
    assert!(counts.keys().all(|(s, _)| *s != 500), "{counts:?}");

    // Per account: two in flight for the account, even with room overall.
    drop(service);
    let (service, token) = start(
        &upstream,
        &[
            "--max-parses",
            "100",
            "--max-parses-per-account",
            "2",
            "--parse-queue",
            "0",
        ],
    )
    .await;
    let (counts, _) = burst(&service, &token, 10).await;
    eprintln!("10 parses, 2 per account: {counts:?}");
    assert_eq!(count(&counts, 503, "overloaded"), 8, "{counts:?}");
}

/// The instance pool holds 1000 instances; 1,100 slow parses at once used to
/// make the 1,001st instantiation fail with `500 extractor_failed`. With the
/// default overall bound (256) the excess answers `503 overloaded`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_instance_pool_never_answers_500() {
    let upstream = FaultyUpstream::start(vec![(
        SLOW_POST.into(),
        Fault::Slow(Duration::from_secs(8)),
    )])
    .await
    .unwrap();
    let (service, token) = start(
        &upstream,
        &[
            "--max-parses-per-account",
            "5000",
            "--parse-queue",
            "5000",
            "--parse-queue-wait-ms",
            "1000",
        ],
    )
    .await;
    let (counts, retry_after) = burst(&service, &token, 1_100).await;
    eprintln!("1,100 parses at once: {counts:?}");
    assert!(counts.keys().all(|(s, _)| *s != 500), "{counts:?}");
    let overloaded = count(&counts, 503, "overloaded");
    assert!(overloaded >= 1_100 - 256, "{counts:?}");
    assert!(retry_after);
}
