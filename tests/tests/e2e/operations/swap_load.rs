//! Swap under load: concurrent parses run for several seconds while the
//! tiktok component is replaced many times, valid and broken versions
//! alternating. Not one request may fail, and each valid version must be
//! the one serving after its swap.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mediaparse_tests::guest;

use super::*;

const CLIENTS: usize = 4;
const VALID_SWAPS: usize = 6;

#[tokio::test]
async fn swapping_under_load_fails_no_request() {
    let up = upstream().await;
    let dir = extractors(&[("tiktok", "0.0.0")]);
    let run = Arc::new(start(dir.path(), &up.base_url(), None, None).await);
    assert_eq!(
        run.serving_version("tiktok").await.as_deref(),
        Some("0.0.0")
    );

    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let failures = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut load = Vec::new();
    for _ in 0..CLIENTS {
        let (run, stop, ok, failed, failures) = (
            run.clone(),
            stop.clone(),
            ok.clone(),
            failed.clone(),
            failures.clone(),
        );
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let a = run.parse("tiktok", "ok").await;
                if a.status == 200
                    && a.body["data"]["title"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("mptest "))
                {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    failed.fetch_add(1, Ordering::Relaxed);
                    if let Ok(mut f) = failures.lock() {
                        f.push(format!("{} {}", a.status, a.body));
                    }
                }
            }
        }));
    }

    let started = Instant::now();
    let base = guest::component("tiktok", "0.0.0");
    let mut swap_times = Vec::new();
    for i in 1..=VALID_SWAPS {
        let version = format!("{i}.0.0");
        let written = Instant::now();
        guest::install(dir.path(), "tiktok", &guest::component("tiktok", &version));
        eventually(
            &format!("{version} serves"),
            Duration::from_secs(30),
            || async { run.serving_version("tiktok").await.as_deref() == Some(version.as_str()) },
        )
        .await;
        swap_times.push(written.elapsed());
        // A broken file next: alternately not a component and the wrong platform.
        let broken = if i % 2 == 0 {
            guest::truncated(&base)
        } else {
            guest::component("weibo", &version)
        };
        let failures_before = metric(
            &run.metrics().await,
            r#"mediaparse_extractor_reloads_total{platform="tiktok",outcome="failed"}"#,
        );
        guest::install(dir.path(), "tiktok", &broken);
        eventually("broken file refused", Duration::from_secs(30), || async {
            metric(
                &run.metrics().await,
                r#"mediaparse_extractor_reloads_total{platform="tiktok",outcome="failed"}"#,
            ) > failures_before
        })
        .await;
        assert_eq!(
            run.serving_version("tiktok").await.as_deref(),
            Some(version.as_str())
        );
    }
    stop.store(true, Ordering::Relaxed);
    for task in load {
        task.await.expect("load task");
    }
    let elapsed = started.elapsed();
    let (ok, failed) = (ok.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!(
        "swap under load: {CLIENTS} clients, {} swaps ({VALID_SWAPS} valid, {VALID_SWAPS} broken) in {elapsed:?}: \
         {ok} parses ok, {failed} failed; file renamed -> new version serving: {swap_times:?}",
        2 * VALID_SWAPS
    );
    assert_eq!(
        failed,
        0,
        "failed requests: {:?}",
        failures.lock().map(|f| f.clone()).unwrap_or_default()
    );
    assert!(ok > 0);
    assert!(
        elapsed > Duration::from_secs(2),
        "the load ran for several seconds"
    );
}
