//! A platform break caught by its canary, end to end on the fake upstream:
//! the platform's answers switch to a changed shape → its canary (every
//! second here) marks it `broken` within one interval → the breaker answers
//! `503 platform_unavailable` without upstream requests → the alert receiver
//! gets a signed alert → `/api/v1/status` shows it → `failures export` +
//! `mediaparse replay` reproduce the failure → the upstream is restored →
//! the canary, as the half-open probe, finds it working → `ok` and a
//! recovery alert. Prints the detection time and the requests saved.

use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::Value;

use super::platform_health::{ADMIN, ALERT_SECRET, admin_get, alert_receiver, parse, public_state};
use crate::webhook_receiver::Received;

/// The canary interval: short, so the test is quick; detection is judged against it.
const CANARY_EVERY: Duration = Duration::from_secs(1);

/// `tiktok`'s entry in the admin health view.
async fn tiktok_health(service: &Service) -> Value {
    let health: Value = admin_get(service, "/api/v1/admin/health")
        .await
        .json()
        .await
        .expect("json");
    health["data"]["platforms"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["platform"] == "tiktok"))
        .unwrap_or_else(|| panic!("tiktok in {health}"))
        .clone()
}

/// Poll `tiktok`'s public state until it is `want`; how long that took.
async fn until_state(service: &Service, want: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        if public_state(service).await == want {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "tiktok never {want}: {}",
            tiktok_health(service).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The health alerts about tiktok received so far, as `from->to`.
fn tiktok_changes(got: &[Received]) -> Vec<String> {
    got.iter()
        .filter_map(|alert| {
            assert!(alert.verifies_with(ALERT_SECRET), "signed: {alert:?}");
            let body = alert.json();
            (body["data"]["platform"] == "tiktok").then(|| {
                format!("{}->{}", body["data"]["from"], body["data"]["to"]).replace('"', "")
            })
        })
        .collect()
}

#[tokio::test]
async fn a_canary_catches_a_changed_platform_and_its_failure_replays_as_a_fixture() {
    let post = Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/video_post"))
        .expect("fixture case");
    let upstream = FakeUpstream::start(std::slice::from_ref(&post))
        .await
        .unwrap();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    let alerts = alert_receiver().await;
    // Canaries of other platforms (if their installed platform.toml has
    // any) run once an hour; tiktok's every second, on the fixture's post.
    std::fs::write(
        &config,
        format!(
            "[health]\nbreaker = \"on\"\ncanaries = \"on\"\ncanary_every = \"1h\"\ncooldown_ms = 3000\n\
             alert_urls = [\"{}\"]\nalert_secret = \"{ALERT_SECRET}\"\nalert_min_interval_secs = 0\n\
             [platforms.tiktok]\ncanary_every = \"{}ms\"\ncanaries = [{{ url = \"{}\", expect = {{ min_videos = 1 }} }}]\n",
            alerts.url,
            CANARY_EVERY.as_millis(),
            post.input
        ),
    )
    .expect("config");
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        config: Some(config),
        admin_token: Some(ADMIN.into()),
        extra_args: vec!["--rate-limit".into(), "0".into()],
        ..Default::default()
    })
    .await
    .expect("service");
    service.add_credits("default", 100).expect("credits");
    let token = service.create_key(&[]).expect("key");

    // The canary runs and finds the platform healthy, charging no one.
    until_state(&service, "ok", Duration::from_secs(30)).await;
    let canary = tiktok_health(&service).await["lastCanary"].clone();
    assert_eq!(canary["outcome"], "ok", "{canary}");
    assert_eq!(canary["url"], post.input.as_str(), "{canary}");
    let (code, out) = service
        .cli(&["credits", "show", "--account", "default", "--json"])
        .expect("cli");
    assert_eq!(code, 0, "{out}");
    let before: Value = serde_json::from_str(out.trim()).expect("json");
    let per_parse = {
        let n = upstream.requests();
        let ok = parse(&service, &token, &post.input).await;
        assert_eq!((ok.status, ok.charged.as_str()), (200, "1"), "{}", ok.code);
        upstream.requests() - n
    };
    assert!(per_parse >= 1);

    // The platform changes the shape of its answers.
    upstream.reshape_with(r#"{"status_code":0,"renamed":{"item":null}}"#);
    let detection = until_state(&service, "broken", CANARY_EVERY * 30).await;
    let health = tiktok_health(&service).await;
    assert_eq!(health["breaker"]["state"], "open", "{health}");
    assert_ne!(health["lastCanary"]["outcome"], "ok", "{health}");
    assert!(
        health["reason"]
            .as_str()
            .is_some_and(|r| r.contains("canary")),
        "{health}"
    );
    // One failed canary was enough: no live parse failed in between.
    assert_eq!(health["window"]["failures"], 1, "{health}");

    // While open, parses are refused at once, without upstream requests.
    let requests = upstream.requests();
    let mut refused = 0;
    for _ in 0..5 {
        let answer = parse(&service, &token, &post.input).await;
        if answer.status != 503 {
            // The cool-down ended under load: the rest of the test still holds.
            break;
        }
        assert_eq!(
            (answer.code.as_str(), answer.charged.as_str()),
            ("platform_unavailable", "0")
        );
        assert!(answer.retry_after.is_some());
        refused += 1;
    }
    assert!(refused >= 1, "the breaker refused nothing");
    assert_eq!(
        upstream.requests(),
        requests,
        "refused without an upstream request"
    );

    // A signed alert about the break.
    alerts
        .wait_until(
            |got| tiktok_changes(got).contains(&"ok->broken".to_string()),
            "the alert ok->broken",
        )
        .await;

    // The failing canary parse was kept; exported, it replays to the same failure.
    let deadline = Instant::now() + Duration::from_secs(30);
    let kept = loop {
        let (code, out) = service
            .cli(&["failures", "list", "--platform", "tiktok", "--json"])
            .expect("cli");
        assert_eq!(code, 0, "{out}");
        let kept: Vec<Value> = serde_json::from_str(out.trim()).expect("json");
        if let Some(first) = kept.first() {
            break first.clone();
        }
        assert!(Instant::now() < deadline, "no failure kept");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id = kept["id"].as_str().expect("id").to_string();
    let listed: Value = admin_get(&service, "/api/v1/admin/failures?platform=tiktok")
        .await
        .json()
        .await
        .expect("json");
    let api = &listed["data"]["failures"][0];
    assert_eq!(api["id"], id.as_str(), "{listed}");
    assert!(
        api["export"]
            .as_str()
            .is_some_and(|c| c.contains(&format!("failures export {id}"))),
        "{listed}"
    );
    let case_dir = dir.path().join("exported");
    let to = case_dir.to_string_lossy().into_owned();
    let (code, out) = service
        .cli(&["failures", "export", &id, "--to", &to])
        .expect("cli");
    assert_eq!(code, 0, "{out}");
    let case = Case::load(&case_dir).expect("an exported case loads");
    assert_eq!(case.expect.error.as_deref(), kept["code"].as_str());
    let (code, out) = service.cli(&["replay", &to]).expect("cli");
    assert_eq!(code, 0, "replay reproduces the failure: {out}");
    assert!(out.starts_with("PASS"), "{out}");

    // The platform is restored: after the cool-down the canary probes it.
    upstream.restore();
    let recovery = until_state(&service, "ok", Duration::from_secs(60)).await;
    let health = tiktok_health(&service).await;
    assert_eq!(health["breaker"]["state"], "closed", "{health}");
    assert_eq!(health["lastCanary"]["outcome"], "ok", "{health}");
    let got = alerts
        .wait_until(
            |got| tiktok_changes(got).contains(&"broken->ok".to_string()),
            "the alert broken->ok",
        )
        .await;
    let changes = tiktok_changes(&got);
    assert_eq!(changes, ["ok->broken", "broken->ok"]);

    // Canaries are never charged: only the one live parse was.
    let (_, out) = service
        .cli(&["credits", "show", "--account", "default", "--json"])
        .expect("cli");
    let after: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(
        after["balance"].as_i64(),
        before["balance"].as_i64().map(|b| b - 1)
    );
    println!(
        "detection {:.2}s (canary every {:.1}s); {refused} parses refused while open, {} upstream requests saved; recovered {:.2}s after restore",
        detection.as_secs_f64(),
        CANARY_EVERY.as_secs_f64(),
        refused * per_parse,
        recovery.as_secs_f64()
    );
}

/// `tiktok`'s canary runs with `outcome` on one host, from its `/metrics`.
async fn canary_runs(service: &Service, outcome: &str) -> u64 {
    let text = admin_get(service, "/metrics")
        .await
        .text()
        .await
        .expect("metrics");
    let prefix =
        format!(r#"mediaparse_canary_runs_total{{platform="tiktok",outcome="{outcome}"}} "#);
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |n| n.trim().parse().expect("a count"))
}

#[tokio::test]
async fn hosts_on_one_postgres_take_turns_running_canaries_and_share_what_they_find() {
    let url = tokio::task::spawn_blocking(mediaparse::store::test_pg::fresh_database)
        .await
        .unwrap();
    let post = Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/video_post"))
        .expect("fixture case");
    let upstream = FakeUpstream::start(std::slice::from_ref(&post))
        .await
        .unwrap();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    // A long cool-down: once broken, the platform stays broken for the test.
    std::fs::write(
        &config,
        format!(
            "[health]\nbreaker = \"on\"\ncanaries = \"on\"\ncanary_every = \"1h\"\ncooldown_ms = 600000\n\
             [platforms.tiktok]\ncanary_every = \"500ms\"\ncanaries = [{{ url = \"{}\" }}]\n",
            post.input
        ),
    )
    .expect("config");
    let data: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut hosts = Vec::new();
    for d in &data {
        hosts.push(
            Service::start(ServiceOptions {
                upstream: Some(upstream.base_url()),
                db: Some(std::path::PathBuf::from(&url)),
                config: Some(config.clone()),
                admin_token: Some(ADMIN.into()),
                extra_env: vec![("MEDIAPARSE_DATA_DIR".into(), d.path().display().to_string())],
                ..Default::default()
            })
            .await
            .expect("host"),
        );
    }
    for host in &hosts {
        until_state(host, "ok", Duration::from_secs(60)).await;
    }
    // One host holds the lease and runs them; the other runs none.
    let mut runs = Vec::new();
    for host in &hosts {
        runs.push(canary_runs(host, "ok").await);
    }
    assert_eq!(
        runs.iter().filter(|n| **n > 0).count(),
        1,
        "exactly one host ran canaries: {runs:?}"
    );
    let runner = runs.iter().position(|n| *n > 0).expect("a runner");
    let other = 1 - runner;

    // The runner's canary finds the change; the other host, which ran no
    // canary, turns broken from the stored result and refuses at once.
    upstream.reshape_with(r#"{"status_code":0,"renamed":{"item":null}}"#);
    until_state(&hosts[other], "broken", Duration::from_secs(60)).await;
    let health = tiktok_health(&hosts[other]).await;
    assert_eq!(health["breaker"]["state"], "open", "{health}");
    assert!(health["lastCanary"]["outcome"].is_string(), "{health}");
    let token = hosts[other].create_key(&[]).expect("key");
    hosts[other].add_credits("default", 10).expect("credits");
    let requests = upstream.requests();
    let refused = parse(&hosts[other], &token, &post.input).await;
    assert_eq!(
        (refused.status, refused.code.as_str()),
        (503, "platform_unavailable")
    );
    // The runner keeps probing nothing while open; no request left from the refusal.
    assert_eq!(upstream.requests(), requests);
    assert_eq!(canary_runs(&hosts[other], "ok").await, 0);

    // The runner stops: the other host takes the lease over and runs them.
    hosts[runner].kill().await;
    upstream.restore();
    let deadline = Instant::now() + Duration::from_secs(60);
    while canary_runs(&hosts[other], "skipped").await == 0 {
        assert!(Instant::now() < deadline, "the lease was never taken over");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
