//! Billing under concurrency and crashes: the balance is never overdrawn,
//! and the ledger always explains it (Σ grants − Σ ledger = balance).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::support::{self, start_on};

/// Requests sent at once, and the credits that cover only some of them.
const REQUESTS: usize = 40;
const CREDITS: i64 = 7;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_parses_against_a_balance_covering_k_exactly_k_succeed() {
    let env = support::start(&[]).await;
    let s = &env.service;
    let urls = support::tiktok_urls();
    s.add_credits("acme", CREDITS).unwrap();
    let (_, token) = support::create_key(s, "acme", &["--rate-limit", "off"]);
    let barrier = Arc::new(tokio::sync::Barrier::new(REQUESTS));
    let tasks: Vec<_> = (0..REQUESTS)
        .map(|i| {
            let (base, token, url, barrier) = (
                s.url("/api/v1/parse"),
                token.clone(),
                urls[i % urls.len()].clone(),
                barrier.clone(),
            );
            tokio::spawn(async move {
                let req = reqwest::Client::new()
                    .post(base)
                    .bearer_auth(token)
                    .json(&serde_json::json!({ "url": url }));
                barrier.wait().await;
                support::send(req).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    let ok: Vec<_> = answers.iter().filter(|a| a.status == 200).collect();
    let refused = answers
        .iter()
        .filter(|a| a.status == 402 && a.code() == "insufficient_credits")
        .count();
    let charged: i64 = answers.iter().map(|a| a.charged()).sum();
    let others: Vec<_> = answers
        .iter()
        .filter(|a| a.status != 200 && a.status != 402)
        .map(|a| a.body.to_string())
        .collect();
    assert!(others.is_empty(), "unexpected answers: {others:?}");
    assert_eq!(ok.len() as i64, CREDITS, "exactly K succeed");
    assert_eq!(refused, REQUESTS - CREDITS as usize, "the rest are 402");
    assert!(ok.iter().all(|a| a.charged() == 1));

    let store = mediaparse::store::Store::open(&s.db).unwrap();
    let ledger = store.ledger_sum(Some("acme")).unwrap();
    assert_eq!(ledger, charged, "Σ ledger = Σ X-Credits-Charged");
    assert_eq!(ledger, CREDITS, "Σ ledger = credits taken");
    assert_eq!(store.balance("acme").unwrap(), 0);
    let usage = store
        .usage(&mediaparse::store::UsageFilter {
            account: Some("acme".into()),
            entries: 100,
            ..Default::default()
        })
        .unwrap();
    let charged_ids: HashSet<_> = usage.entries.iter().map(|e| e.request_id.clone()).collect();
    let ok_ids: HashSet<_> = ok.iter().map(|a| a.request_id()).collect();
    assert_eq!(
        charged_ids, ok_ids,
        "one ledger row per successful response"
    );
    support::assert_books_balance(&s.db);
    eprintln!(
        "concurrency: {REQUESTS} requests, {} succeeded, {refused} got 402, ledger sum {ledger}, balance 0",
        ok.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_a_load_leaves_balances_and_ledger_consistent() {
    const GRANTED: i64 = 10_000;
    const WORKERS: usize = 6;
    const KILL_AFTER: usize = 15;
    const MAX_PER_WORKER: usize = 200;
    let mut first = support::start(&[]).await;
    let db = first.service.db.clone();
    first.service.add_credits("acme", GRANTED).unwrap();
    let (_, token) = support::create_key(&first.service, "acme", &["--rate-limit", "off"]);
    let urls = support::tiktok_urls();
    let successes = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let ok_ids = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (base, token, urls) = (
                first.service.url("/api/v1/parse"),
                token.clone(),
                urls.clone(),
            );
            let (successes, stop, ok_ids) = (successes.clone(), stop.clone(), ok_ids.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                for i in 0..MAX_PER_WORKER {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let sent = client
                        .post(&base)
                        .bearer_auth(&token)
                        .json(&serde_json::json!({ "url": urls[(w + i) % urls.len()] }))
                        .send()
                        .await;
                    match sent {
                        Ok(r) if r.status() == 200 => {
                            if let Some(id) = r.headers().get("x-request-id") {
                                ok_ids
                                    .lock()
                                    .unwrap()
                                    .push(id.to_str().unwrap_or_default().to_string());
                            }
                            successes.fetch_add(1, Ordering::SeqCst);
                        }
                        Ok(r) => panic!("unexpected status {}", r.status()),
                        // The server died under us: the outcome of this one is unknown.
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    // Kill while requests are in flight.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while successes.load(Ordering::SeqCst) < KILL_AFTER && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    first.service.kill().await;
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    let seen = successes.load(Ordering::SeqCst);
    assert!(seen >= KILL_AFTER, "the load ran before the kill: {seen}");

    // Restart on the same database.
    let second = start_on(Some(db.clone()), &[]).await;
    let store = mediaparse::store::Store::open(&db).unwrap();
    let acme = store.account("acme").unwrap();
    assert!(acme.consistent(), "books balance after the crash: {acme:?}");
    assert_eq!(acme.granted, GRANTED);
    assert_eq!(acme.balance, GRANTED - acme.spent);
    let usage = store
        .usage(&mediaparse::store::UsageFilter {
            account: Some("acme".into()),
            entries: 100_000,
            ..Default::default()
        })
        .unwrap();
    let ledger_ids: HashSet<_> = usage.entries.iter().map(|e| e.request_id.clone()).collect();
    assert_eq!(ledger_ids.len(), usage.entries.len(), "one row per request");
    for id in ok_ids.lock().unwrap().iter() {
        assert!(ledger_ids.contains(id), "a 200 without a ledger row: {id}");
    }
    // In-flight requests may have committed their charge without answering.
    assert!(usage.requests as usize >= seen);
    assert!(usage.requests as usize <= seen + WORKERS);

    let after = support::parse(&second.service, Some(&token), &urls[0]).await;
    assert_eq!((after.status, after.charged()), (200, 1), "{}", after.body);
    let view = support::account_view(&second.service, &token).await;
    assert_eq!(view.body["data"]["balance"], acme.balance - 1);
    support::assert_books_balance(&db);
    eprintln!(
        "crash: {seen} answered successes before SIGKILL, {} ledger rows, balance {} of {GRANTED}",
        usage.requests, acme.balance
    );
    drop(first);
}
