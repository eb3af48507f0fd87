//! Platform health and the circuit breaker over real HTTP: a platform whose
//! upstream breaks turns `degraded`, then `broken` in `/api/v1/status`; its
//! next parse answers `503 platform_unavailable` with `Retry-After` without
//! an upstream request and without a charge; after the cool-down, with the
//! upstream restored, a parse tries, succeeds, and the platform is `ok`.
//! Each change into or out of trouble is POSTed, signed, to an alert
//! receiver on loopback.

use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

use crate::webhook_receiver::Receiver;

pub(super) const ADMIN: &str = "operator-token-of-the-platform-health-rig";

/// The Standard Webhooks example secret.
pub(super) const ALERT_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A receiver of alert POSTs on loopback (answering `200`).
pub(super) async fn alert_receiver() -> Receiver {
    Receiver::start(&[]).await
}

/// Failures on the platform's side (the only ones that count).
const PLATFORM_SIDE: &[&str] = &[
    "upstream_error",
    "extractor_failed",
    "login_required",
    "upstream_rate_limited",
    "upstream_timeout",
];

pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) code: String,
    pub(super) charged: String,
    pub(super) retry_after: Option<u64>,
}

pub(super) async fn parse(service: &Service, token: &str, input: &str) -> Answer {
    // `no-cache`: every parse asks the platform (a cached result says nothing about it).
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(token)
        .header("cache-control", "no-cache")
        .json(&json!({ "url": input }))
        .send()
        .await
        .expect("send");
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    let charged = header("x-credits-charged").unwrap_or_default();
    let retry_after = header("retry-after").map(|v| v.parse().expect("Retry-After seconds"));
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.expect("json");
    Answer {
        status,
        code: body["code"].as_str().unwrap_or_default().to_string(),
        charged,
        retry_after,
    }
}

/// `tiktok`'s state in the public status answer.
pub(super) async fn public_state(service: &Service) -> String {
    let resp = reqwest::get(service.url("/api/v1/status"))
        .await
        .expect("status");
    assert_eq!(resp.status().as_u16(), 200);
    let cache = resp
        .headers()
        .get("cache-control")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(cache.starts_with("public, max-age="), "{cache}");
    let body: Value = resp.json().await.expect("json");
    let tiktok = body["data"]["platforms"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["id"] == "tiktok"))
        .unwrap_or_else(|| panic!("tiktok in {body}"));
    assert_eq!(
        tiktok.as_object().map(|o| o.len()),
        Some(2),
        "the public status has no details: {tiktok}"
    );
    tiktok["state"].as_str().unwrap_or_default().to_string()
}

pub(super) async fn admin_get(service: &Service, path: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(service.url(path))
        .bearer_auth(ADMIN)
        .send()
        .await
        .expect("admin request")
}

fn balance(service: &Service) -> i64 {
    let (code, out) = service
        .cli(&["credits", "show", "--account", "default", "--json"])
        .expect("cli");
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).expect("json");
    v["balance"].as_i64().expect("balance")
}

#[tokio::test]
async fn a_broken_platform_is_refused_without_upstream_requests_until_it_recovers() {
    let post = Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/video_post"))
        .expect("fixture case");
    let upstream = FakeUpstream::start(std::slice::from_ref(&post))
        .await
        .unwrap();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    // Judged from 4 parses; a 3 s cool-down: long enough that the refusal
    // right after the opening parse lands inside it on a loaded machine.
    // Every change alerted at once.
    let alerts = alert_receiver().await;
    std::fs::write(
        &config,
        format!(
            // Under the upstream override an unconfigured breaker is off:
            // this service switches it on, as a deployment has it.
            "[health]\nbreaker = \"on\"\nmin_parses = 4\ncooldown_ms = 3000\nalert_urls = [\"{}\"]\n\
             alert_secret = \"{ALERT_SECRET}\"\nalert_min_interval_secs = 0\n",
            alerts.url
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

    assert_eq!(public_state(&service).await, "unknown", "never parsed");
    let ok = parse(&service, &token, &post.input).await;
    assert_eq!((ok.status, ok.charged.as_str()), (200, "1"), "{}", ok.code);
    assert_eq!(public_state(&service).await, "ok");
    let before = balance(&service);

    // The platform breaks: its pages answer 500.
    upstream.break_with(500);
    for i in 1..=4 {
        let failed = parse(&service, &token, &post.input).await;
        assert!(
            PLATFORM_SIDE.contains(&failed.code.as_str()),
            "parse {i}: {} {}",
            failed.status,
            failed.code
        );
        assert_eq!(failed.charged, "0");
        if i == 3 {
            // 3 of 4 counted parses failed: degraded, still parsing.
            assert_eq!(public_state(&service).await, "degraded");
        }
    }
    // 4 of 5 (80 %): broken.
    assert_eq!(public_state(&service).await, "broken");
    let requests = upstream.requests();
    let refused = parse(&service, &token, &post.input).await;
    assert_eq!(
        (
            refused.status,
            refused.code.as_str(),
            refused.charged.as_str()
        ),
        (503, "platform_unavailable", "0")
    );
    let wait = refused.retry_after.expect("Retry-After");
    assert!((1..=3).contains(&wait), "Retry-After {wait}");
    assert_eq!(
        upstream.requests(),
        requests,
        "refused without an upstream request"
    );
    assert_eq!(balance(&service), before, "nothing charged");

    let health: Value = admin_get(&service, "/api/v1/admin/health")
        .await
        .json()
        .await
        .expect("json");
    let tiktok = health["data"]["platforms"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["platform"] == "tiktok"))
        .unwrap_or_else(|| panic!("tiktok in {health}"))
        .clone();
    assert_eq!(tiktok["state"], "broken", "{tiktok}");
    assert_eq!(tiktok["breaker"]["state"], "open", "{tiktok}");
    assert!(tiktok["breaker"]["until"].is_string(), "{tiktok}");
    assert_eq!(tiktok["window"]["failures"], 4, "{tiktok}");
    let last = &tiktok["lastFailures"][0];
    assert!(
        PLATFORM_SIDE.contains(&last["code"].as_str().unwrap_or_default()),
        "{tiktok}"
    );
    assert!(
        last["at"].is_string() && last["message"].is_string(),
        "{tiktok}"
    );
    let metrics = admin_get(&service, "/metrics")
        .await
        .text()
        .await
        .expect("metrics");
    for line in [
        r#"mediaparse_platform_health{platform="tiktok",state="broken"} 1"#,
        r#"mediaparse_platform_health{platform="tiktok",state="ok"} 0"#,
        r#"mediaparse_breaker_opens_total{platform="tiktok"} 1"#,
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }

    // The platform recovers; once the cool-down ends a parse tries and succeeds.
    upstream.restore();
    let deadline = Instant::now() + Duration::from_secs(30);
    let recovered = loop {
        let answer = parse(&service, &token, &post.input).await;
        if answer.status == 200 {
            break answer;
        }
        assert_eq!(
            (answer.status, answer.code.as_str(), answer.charged.as_str()),
            (503, "platform_unavailable", "0"),
            "refused until the cool-down ends"
        );
        assert!(
            Instant::now() < deadline,
            "the breaker never let a parse try"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(recovered.charged, "1");
    assert_eq!(public_state(&service).await, "ok");
    assert_eq!(
        balance(&service),
        before - 1,
        "only the success was charged"
    );

    // Three alerts, in order, each signed with the secret (unknown → ok is none).
    let got = alerts.wait_for(3).await;
    let mut changes = Vec::new();
    for alert in &got {
        assert!(alert.id.starts_with("msg_"), "{alert:?}");
        assert!(alert.verifies_with(ALERT_SECRET), "{alert:?}");
        let body: Value = serde_json::from_slice(&alert.body).expect("json");
        assert_eq!(body["type"], "platform.health", "{body}");
        assert_eq!(body["data"]["platform"], "tiktok", "{body}");
        changes.push(format!("{}->{}", body["data"]["from"], body["data"]["to"]).replace('"', ""));
    }
    // ok → unknown (1 of 2 failed: too few to judge) is not alerted either.
    assert_eq!(
        changes,
        ["unknown->degraded", "degraded->broken", "broken->ok"]
    );
}
