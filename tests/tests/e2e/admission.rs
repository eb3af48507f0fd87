//! Admission control: parses in flight are bounded
//! overall and per account; past the bounds and a short wait a parse answers
//! `503 overloaded` with `Retry-After`, never `500` from a full instance pool.
//! An upstream on loopback holds each admitted parse (and its instance)
//! until the test opens its gate, so the counts are exact at any load: while
//! the gate is closed no admitted parse can end and free its place.

use std::time::{Duration, Instant};

use mediaparse_tests::faults::{Fault, FaultyUpstream};
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};
use tokio::sync::watch;

const SLOW_POST: &str = "7000000000000000001";

/// Longer than any burst takes to settle on a loaded machine: a deadline
/// that only a hung service reaches.
const PATIENCE: Duration = Duration::from_secs(120);

/// An upstream holding every parse of [`SLOW_POST`] until the gate opens.
async fn held_upstream() -> (FaultyUpstream, watch::Sender<bool>) {
    let (gate, held) = watch::channel(false);
    let upstream = FaultyUpstream::start(vec![(SLOW_POST.into(), Fault::Held(held))])
        .await
        .unwrap();
    (upstream, gate)
}

/// The service, a key, and the folder of its configuration. The upstream
/// request and parse timeouts are far past [`PATIENCE`]: while the gate is
/// closed no admitted parse ends by timing out and frees its place.
async fn start(upstream: &FaultyUpstream, args: &[&str]) -> (Service, String, tempfile::TempDir) {
    let timeout_ms = (PATIENCE * 3).as_millis().to_string();
    let conf_dir = tempfile::tempdir().unwrap();
    let config = conf_dir.path().join("mediaparse.toml");
    std::fs::write(
        &config,
        format!("[limits]\nparse_timeout_ms = {timeout_ms}\n"),
    )
    .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        config: Some(config),
        extra_env: vec![("MEDIAPARSE_UPSTREAM_TIMEOUT_MS".into(), timeout_ms)],
        extra_args: args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000_000).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    (service, token, conf_dir)
}

/// One parse's answer: status, code, whether it carried `Retry-After`.
type Answer = (u16, String, bool);

/// `n` parses at once; their answers arrive on the channel as they come.
fn burst(service: &Service, token: &str, n: usize) -> tokio::sync::mpsc::UnboundedReceiver<Answer> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let url = format!("https://www.tiktok.com/@slow/video/{SLOW_POST}");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..n {
        let req = client
            .post(service.url("/api/v1/parse"))
            .bearer_auth(token)
            // Each parse runs its own extraction: concurrent parses of one
            // post would otherwise share the first one's (the parse cache).
            .header("cache-control", "no-cache")
            .json(&json!({ "url": url }));
        let tx = tx.clone();
        tokio::spawn(async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let retry_after = resp.headers().get("retry-after").is_some();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            let code = body["code"].as_str().unwrap_or("").to_string();
            let _ = tx.send((status, code, retry_after));
        });
    }
    rx
}

/// How many parses of [`SLOW_POST`] the upstream holds now.
fn held(upstream: &FaultyUpstream) -> usize {
    upstream
        .seen()
        .iter()
        .filter(|u| u.contains(SLOW_POST))
        .count()
}

/// `n` parses at once with the gate closed. While it is closed no admitted
/// parse can end, so every parse settles in one of two final states: refused
/// (answered) or held at the upstream. Once all `n` have settled, exactly
/// `n - admitted` answered `503 overloaded` with `Retry-After` and exactly
/// `admitted` are held: a bound off by one shows as soon as the burst has
/// settled, not at a deadline. Then the gate opens and the admitted ones
/// answer, none of them 503 or 500.
async fn past_the_bounds(
    service: &Service,
    token: &str,
    upstream: &FaultyUpstream,
    gate: watch::Sender<bool>,
    n: usize,
    admitted: usize,
) {
    let started = Instant::now();
    let mut answers = burst(service, token, n);
    let mut refused = Vec::new();
    while refused.len() + held(upstream) < n {
        assert!(
            started.elapsed() < PATIENCE,
            "after {PATIENCE:?}: {} answered, {} held, of {n}",
            refused.len(),
            held(upstream)
        );
        match tokio::time::timeout(Duration::from_millis(20), answers.recv()).await {
            Ok(answer) => refused.push(answer.expect("an answer")),
            Err(_elapsed) => {}
        }
    }
    eprintln!(
        "{n} parses, {admitted} admitted: settled in {:?}",
        started.elapsed()
    );
    let mut tally = std::collections::BTreeMap::new();
    for answer in &refused {
        *tally.entry(answer).or_insert(0) += 1;
    }
    assert_eq!(
        (refused.len(), held(upstream)),
        (n - admitted, admitted),
        "(answered, held at the upstream) with the gate closed; answers: {tally:?}"
    );
    for (i, answer) in refused.iter().enumerate() {
        assert_eq!(
            (answer.0, answer.1.as_str(), answer.2),
            (503, "overloaded", true),
            "answer {i} with {admitted} parses held"
        );
    }
    gate.send_replace(true);
    for i in 0..admitted {
        let (status, code, _) = tokio::time::timeout(PATIENCE, answers.recv())
            .await
            .expect("the admitted parses answer once the gate opens")
            .expect("an answer");
        assert!(
            status != 503 && status != 500,
            "admitted parse {i}: {status} {code}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn past_the_bounds_parses_answer_503_overloaded_with_retry_after() {
    // 4 admitted; the other 16 queue (4 of them, 500 ms) or are refused at once.
    let (upstream, gate) = held_upstream().await;
    let (service, token, _conf) = start(
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
    past_the_bounds(&service, &token, &upstream, gate, 20, 4).await;

    // Per account: two in flight for the account, even with room overall.
    drop(service);
    let (upstream, gate) = held_upstream().await;
    let (service, token, _conf) = start(
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
    past_the_bounds(&service, &token, &upstream, gate, 10, 2).await;
}

/// The instance pool holds 1000 instances; 1,100 slow parses at once used to
/// make the 1,001st instantiation fail with `500 extractor_failed`. With the
/// default overall bound (256) the excess answers `503 overloaded`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_instance_pool_never_answers_500() {
    let (upstream, gate) = held_upstream().await;
    let (service, token, _conf) = start(
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
    past_the_bounds(&service, &token, &upstream, gate, 1_100, 256).await;
}
