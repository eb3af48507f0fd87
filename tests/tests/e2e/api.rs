//! The HTTP contract around a parse: authentication, validation, routing,
//! balance checks, the envelope. Real binary, real SQLite file, real HTTP.

use mediaparse_tests::contract;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const TIKTOK_URL: &str = "https://www.tiktok.com/@someone/video/7305827432509082913";

async fn start() -> (FakeUpstream, Service) {
    let upstream = FakeUpstream::with_routes(vec![]).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    (upstream, service)
}

async fn post(
    service: &Service,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = reqwest::Client::new()
        .post(service.url(path))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    // Every response is checked against docs/openapi.json.
    let (status, headers, body) = contract::read("POST", req.send().await.unwrap()).await;
    (
        status,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
        headers,
    )
}

fn assert_envelope(status: u16, body: &Value, want_status: u16, want_code: &str) {
    assert_eq!(
        (status, body["code"].as_str()),
        (want_status, Some(want_code)),
        "body: {body}"
    );
    assert_eq!(body["status"], want_status);
    assert!(body["data"].is_null());
    assert!(body["msg"].as_str().is_some_and(|m| !m.is_empty()));
}

#[tokio::test]
async fn authentication_failures() {
    let (upstream, service) = start().await;
    let body = json!({"url": TIKTOK_URL}).to_string();
    let (s, b, _) = post(&service, "/api/v1/parse", None, &body).await;
    assert_envelope(s, &b, 401, "missing_token");
    let (s, b, _) = post(
        &service,
        "/api/v1/parse",
        Some("mp_live_not-a-real-token"),
        &body,
    )
    .await;
    assert_envelope(s, &b, 401, "invalid_token");
    let expired = service.create_key(&["--expires", "2020-01-31"]).unwrap();
    let (s, b, _) = post(&service, "/api/v1/parse", Some(&expired), &body).await;
    assert_envelope(s, &b, 401, "token_expired");
    let limited = service
        .create_key(&["--platforms", "youtube,weibo"])
        .unwrap();
    service.add_credits("default", 10).unwrap();
    let (s, b, _) = post(&service, "/api/v1/parse", Some(&limited), &body).await;
    assert_envelope(s, &b, 403, "platform_not_allowed");
    let (s, b, _) = post(
        &service,
        "/api/v1/platforms/tiktok/parse",
        Some(&limited),
        &body,
    )
    .await;
    assert_envelope(s, &b, 403, "platform_not_allowed");
    assert!(
        upstream.hits().is_empty(),
        "nothing fetched for refused requests: {:?}",
        upstream.hits()
    );
    let (code, _) = service
        .cli(&["credits", "add", "--account", "default", "0"])
        .unwrap();
    assert_ne!(code, 0, "adding zero credits is refused");
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.ledger_count(None).unwrap(), 0);
    assert_eq!(store.balance("default").unwrap(), 10);
}

#[tokio::test]
async fn request_validation() {
    let (_upstream, service) = start().await;
    let token = service.create_key(&[]).unwrap();
    for bad in [
        "not json",
        "[]",
        "{}",
        r#"{"url": 7}"#,
        r#"{"url": ""}"#,
        r#"{"url": "https://a.example/1", "extra": true}"#,
        r#"{"url": "https://www.tiktok.com/@a/video/1", "link": "https://www.tiktok.com/@a/video/2"}"#,
    ] {
        let (s, b, _) = post(&service, "/api/v1/parse", Some(&token), bad).await;
        assert_envelope(s, &b, 400, "invalid_request");
    }
    let huge = json!({"url": "x".repeat(200_000)}).to_string();
    let (s, b, _) = post(&service, "/api/v1/parse", Some(&token), &huge).await;
    assert_envelope(s, &b, 413, "payload_too_large");
    let (s, b, _) = post(
        &service,
        "/api/v1/platforms/myspace/parse",
        Some(&token),
        r#"{"url":"https://myspace.com/x"}"#,
    )
    .await;
    assert_envelope(s, &b, 404, "unknown_platform");
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .header("content-type", "text/plain")
        .body(r#"{"url":"x"}"#)
        .send()
        .await
        .unwrap();
    let (status, _, _) = contract::read("POST", resp).await;
    assert_eq!(status, 415);
}

#[tokio::test]
async fn unsupported_urls_are_302_and_free() {
    let (upstream, service) = start().await;
    let token = service.create_key(&[]).unwrap();
    service.add_credits("default", 5).unwrap();
    for input in [
        "https://example.com/video/1",
        "just some words",
        "ftp://www.tiktok.com/@a/video/1",
        "https://www.tiktok.com/@someone",
    ] {
        let (s, b, h) = post(
            &service,
            "/api/v1/parse",
            Some(&token),
            &json!({"url": input}).to_string(),
        )
        .await;
        assert_envelope(s, &b, 400, "302");
        assert_eq!(h["x-credits-charged"], "0");
    }
    // A URL of another platform on a platform endpoint.
    let (s, b, _) = post(
        &service,
        "/api/v1/platforms/youtube/parse",
        Some(&token),
        &json!({"url": TIKTOK_URL}).to_string(),
    )
    .await;
    assert!(
        s == 400 && b["code"] == "302" || s == 503 && b["code"] == "extractor_unavailable",
        "{s} {b}"
    );
    assert!(upstream.hits().is_empty());
}

#[tokio::test]
async fn balance_is_checked_before_any_upstream_work() {
    let (upstream, service) = start().await;
    let token = service.create_key(&[]).unwrap();
    let (s, b, h) = post(
        &service,
        "/api/v1/parse",
        Some(&token),
        &json!({"url": TIKTOK_URL}).to_string(),
    )
    .await;
    assert_envelope(s, &b, 402, "insufficient_credits");
    assert_eq!(h["x-credits-charged"], "0");
    assert!(
        upstream.hits().is_empty(),
        "a 402 fetches nothing: {:?}",
        upstream.hits()
    );
}

#[tokio::test]
async fn capabilities_and_request_ids() {
    let (_upstream, service) = start().await;
    let resp = reqwest::get(service.url("/api/v1/capabilities"))
        .await
        .unwrap();
    let (_, headers, body) = contract::read("GET", resp).await;
    assert!(headers.get("x-request-id").is_some());
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["status"], 200);
    let prices = &body["data"]["billing"]["prices"];
    assert_eq!(prices["youtube"], 3);
    assert_eq!(prices["xiaohongshu"], 10);
    assert_eq!(prices["threads"], 2);
    assert_eq!(prices["kuaishou"], 2);
    assert_eq!(prices["tiktok"], 1);
    let tiktok = body["data"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "tiktok")
        .unwrap()
        .clone();
    assert_eq!(tiktok["enabled"], true);
    let resp = reqwest::Client::new()
        .get(service.url("/nope"))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], "abc-123");
    assert_eq!(resp.status().as_u16(), 404);
}
