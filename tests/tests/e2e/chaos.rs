//! Chaos, counted. 32 clients parse under idempotency
//! keys (retrying a key until it gets a final answer) while the service is
//! killed with SIGKILL and restarted ten times on the same SQLite file; then
//! the books are read: every charged answer has its ledger row, Σ ledger =
//! the credits taken from the balance, and no key was answered twice with
//! different outcomes. And a database another process keeps write-locked
//! past the busy timeout makes parses answer `503 store_busy` before any
//! upstream request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::json;

const CLIENTS: usize = 32;
const KILLS: usize = 10;
const CREDITS: i64 = 1_000_000;
/// Final answers each service gives between its start and its kill.
const WORK_PER_LIFE: usize = 8;

fn photo() -> Case {
    Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/photo_post"))
        .expect("fixture case")
}

async fn start_on(db: &std::path::Path, upstream: &FakeUpstream) -> Service {
    Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        db: Some(db.to_path_buf()),
        extra_args: vec!["--max-parses-per-account".into(), "256".into()],
        ..Default::default()
    })
    .await
    .unwrap()
}

/// A final answer (stored under the key by the service): status, credits, body.
type Final = (u16, i64, String);

fn is_final(status: u16) -> bool {
    status < 500 && !matches!(status, 408 | 409 | 429)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_ten_times_the_books_still_balance() {
    let photo = photo();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("chaos.db");
    let mut service = start_on(&db, &upstream).await;
    service.add_credits("default", CREDITS).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();

    let base = Arc::new(RwLock::new(service.base_url.clone()));
    let stop = Arc::new(AtomicBool::new(false));
    let answers: Arc<Mutex<BTreeMap<String, Vec<Final>>>> = Arc::default();
    let attempts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Final answers so far: each kill waits for the clients to get work done
    // on the service it kills.
    let finals = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let (base, stop, answers, attempts, finals) = (
            base.clone(),
            stop.clone(),
            answers.clone(),
            attempts.clone(),
            finals.clone(),
        );
        let (token, input) = (token.clone(), photo.input.clone());
        clients.push(tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .timeout(Duration::from_secs(20))
                .pool_max_idle_per_host(0)
                .build()
                .unwrap();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let key = format!("c{c}-{n}");
                // Every fourth key is asked twice: the repeat must be the same answer.
                for _ in 0..if n % 4 == 0 { 2 } else { 1 } {
                    // Retry until a final answer (the service may be down,
                    // restarting, or answer 5xx meanwhile).
                    let answer = loop {
                        attempts.fetch_add(1, Ordering::Relaxed);
                        let url = format!("{}/api/v1/parse", base.read().unwrap());
                        let sent = http
                            .post(url)
                            .bearer_auth(&token)
                            .header("idempotency-key", &key)
                            .json(&json!({"url": input}))
                            .send()
                            .await;
                        if let Ok(resp) = sent {
                            let status = resp.status().as_u16();
                            let charged = resp
                                .headers()
                                .get("x-credits-charged")
                                .and_then(|v| v.to_str().ok())
                                .and_then(|v| v.parse().ok())
                                .unwrap_or(0);
                            if let Ok(body) = resp.text().await
                                && is_final(status)
                            {
                                break (status, charged, body);
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    };
                    answers
                        .lock()
                        .unwrap()
                        .entry(key.clone())
                        .or_default()
                        .push(answer);
                    finals.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // Each service serves some final answers before it is killed (polled
    // with a deadline, not a fixed time that a loaded machine may not fill).
    let served_some = |since: usize| {
        let finals = finals.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(120);
            while finals.load(Ordering::Relaxed) < since + WORK_PER_LIFE {
                assert!(
                    Instant::now() < deadline,
                    "no {WORK_PER_LIFE} final answers from a restarted service in 120 s"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let started = Instant::now();
    served_some(0).await;
    for _ in 0..KILLS {
        service.kill().await;
        let restarted = finals.load(Ordering::Relaxed);
        service = start_on(&db, &upstream).await;
        *base.write().unwrap() = service.base_url.clone();
        served_some(restarted).await;
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        tokio::time::timeout(Duration::from_secs(120), c)
            .await
            .expect("every client finishes its last key")
            .unwrap();
    }
    let elapsed = started.elapsed();

    let answers = answers.lock().unwrap().clone();
    let mut charged_keys = 0;
    let mut charged_credits = 0;
    for (key, got) in &answers {
        assert!(
            got.iter().all(|a| a == &got[0]),
            "key {key} answered twice with different outcomes: {got:?}"
        );
        assert_eq!(got[0].0, 200, "key {key}: {got:?}");
        if got[0].1 > 0 {
            charged_keys += 1;
            charged_credits += got[0].1;
        }
    }
    drop(service);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (rows, sum): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), COALESCE(SUM(credits), 0) FROM ledger",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let balance: i64 = conn
        .query_row(
            "SELECT balance FROM accounts WHERE id = 'default'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // Every charged answer has its ledger row (through the key's request id).
    let mut missing = Vec::new();
    for (key, got) in &answers {
        if got[0].1 == 0 {
            continue;
        }
        let found: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM idempotency_keys i JOIN ledger l ON l.request_id = i.request_id
                 WHERE i.idempotency_key = ?1",
                [key],
                |r| r.get(0),
            )
            .unwrap();
        if found != 1 {
            missing.push(key.clone());
        }
    }
    eprintln!(
        "chaos: {} kills in {elapsed:?}, {} attempts, {} keys answered ({} charged, {} credits), ledger {} rows / {} credits, balance {}",
        KILLS,
        attempts.load(Ordering::Relaxed),
        answers.len(),
        charged_keys,
        charged_credits,
        rows,
        sum,
        balance
    );
    assert!(
        missing.is_empty(),
        "charged answers without a ledger row: {missing:?}"
    );
    assert_eq!(sum, CREDITS - balance, "Σ ledger = credits taken");
    assert_eq!(
        (rows, sum),
        (charged_keys, charged_credits),
        "one ledger row per charged key, and no charge nobody was told of"
    );
    assert!(charged_keys >= CLIENTS as i64, "the clients got work done");
}

#[tokio::test]
async fn a_write_locked_database_answers_503_before_any_upstream_request() {
    let photo = photo();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locked.db");
    let service = start_on(&db, &upstream).await;
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();

    // Another process's writer: hold the write lock until the parse has
    // answered (past the 5 s busy timeout, however long that takes).
    let (locked_tx, locked) = tokio::sync::oneshot::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn({
        let db = db.clone();
        move || {
            let mut conn = rusqlite::Connection::open(db).unwrap();
            let tx = conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .unwrap();
            locked_tx.send(()).unwrap();
            // Released by the test, or when the test panics (sender dropped).
            let _ = release_rx.recv();
            tx.rollback().unwrap();
        }
    });
    locked.await.expect("the write lock is taken");
    upstream.clear_hits();
    let started = Instant::now();
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": photo.input}))
        .send()
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let status = resp.status().as_u16();
    let retry_after = resp.headers().get("retry-after").cloned();
    let charged = resp.headers()["x-credits-charged"].clone();
    let body: serde_json::Value = resp.json().await.unwrap();
    eprintln!(
        "locked database: {status} {} after {elapsed:?}",
        body["code"]
    );
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("store_busy")),
        "{body}"
    );
    assert!(retry_after.is_some());
    assert_eq!(charged, "0");
    assert!(
        upstream.hits().is_empty(),
        "no upstream request: {:?}",
        upstream.hits()
    );
    release.send(()).unwrap();
    holder.join().unwrap();
    // The lock released, the same parse succeeds.
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": photo.input}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}
