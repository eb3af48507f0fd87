//! Safe retries: `Idempotency-Key` on both parse
//! endpoints and the MCP tool, Stripe's semantics. Real binary, real SQLite,
//! the recorded TikTok photo post behind the fake upstream.

use std::time::Duration;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

fn photo() -> Case {
    Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/photo_post"))
        .expect("fixture case")
}

async fn start(credits: i64) -> (Case, FakeUpstream, Service, String) {
    let photo = photo();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    if credits > 0 {
        service.add_credits("default", credits).unwrap();
    }
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    (photo, upstream, service, token)
}

struct Answer {
    status: u16,
    charged: String,
    replayed: bool,
    body: Value,
}

async fn parse(
    service: &Service,
    token: &str,
    path: &str,
    key: Option<&str>,
    extra: &[(&str, &str)],
    body: Value,
) -> Answer {
    let mut req = reqwest::Client::new()
        .post(service.url(path))
        .bearer_auth(token)
        .json(&body);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    for (h, v) in extra {
        req = req.header(*h, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let charged = header("x-credits-charged");
    let replayed = header("idempotent-replayed") == "true";
    Answer {
        status,
        charged,
        replayed,
        body: resp.json().await.unwrap_or(Value::Null),
    }
}

async fn account(service: &Service, token: &str) -> Value {
    reqwest::Client::new()
        .get(service.url("/api/v1/account"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_repeated_key_answers_the_first_response_without_a_new_charge() {
    let (photo, upstream, service, token) = start(5).await;
    let body = json!({"url": photo.input});
    let first = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("order-1"),
        &[("x-request-id", "client-id-1")],
        body.clone(),
    )
    .await;
    assert_eq!(
        (first.status, first.charged.as_str()),
        (200, "1"),
        "{}",
        first.body
    );
    assert!(!first.replayed);
    let fetched = upstream.hits().len();
    for _ in 0..3 {
        let again = parse(
            &service,
            &token,
            "/api/v1/parse",
            Some("order-1"),
            &[],
            body.clone(),
        )
        .await;
        assert_eq!((again.status, again.charged.as_str()), (200, "1"));
        assert!(again.replayed, "a repeat says it is one");
        assert_eq!(again.body, first.body, "the first response, again");
    }
    assert_eq!(upstream.hits().len(), fetched, "a repeat fetches nothing");
    let view = account(&service, &token).await;
    assert_eq!(view["data"]["balance"], 4, "one charge: {view}");
    assert_eq!(view["data"]["usage"]["requests"], 1);
    // The ledger's request id is the server's, not the client's X-Request-Id.
    let ledger_id = view["data"]["usage"]["entries"][0]["requestId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        ledger_id.starts_with("req_") && ledger_id.len() == 36,
        "{ledger_id}"
    );
    // A new key is a new request: charged again.
    let other = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("order-2"),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(
        (other.status, other.charged.as_str(), other.replayed),
        (200, "1", false)
    );
    // Without a key, every request is its own.
    let plain = parse(&service, &token, "/api/v1/parse", None, &[], body).await;
    assert_eq!((plain.status, plain.charged.as_str()), (200, "1"));
    assert_eq!(account(&service, &token).await["data"]["balance"], 2);
}

#[tokio::test]
async fn the_same_key_with_another_request_is_a_conflict() {
    let (photo, _upstream, service, token) = start(5).await;
    let first = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("k"),
        &[],
        json!({"url": photo.input}),
    )
    .await;
    assert_eq!(first.status, 200);
    let other_body = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("k"),
        &[],
        json!({"url": "https://www.tiktok.com/@x/video/7000000000000000009"}),
    )
    .await;
    let other_path = parse(
        &service,
        &token,
        "/api/v1/platforms/tiktok/parse",
        Some("k"),
        &[],
        json!({"url": photo.input}),
    )
    .await;
    for a in [&other_body, &other_path] {
        assert_eq!((a.status, a.charged.as_str()), (422, "0"));
        assert_eq!(a.body["code"], "idempotency_conflict");
    }
    // Another API key's same key is its own.
    let token2 = service.create_key(&["--rate-limit", "off"]).unwrap();
    let own = parse(
        &service,
        &token2,
        "/api/v1/parse",
        Some("k"),
        &[],
        json!({"url": photo.input}),
    )
    .await;
    assert_eq!((own.status, own.replayed), (200, false));
    // A key past 255 characters, or not visible ASCII, is refused.
    let long = "k".repeat(256);
    let refused = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some(&long),
        &[],
        json!({"url": photo.input}),
    )
    .await;
    assert_eq!(
        (refused.status, refused.body["code"].as_str()),
        (400, Some("invalid_request"))
    );
    assert_eq!(account(&service, &token).await["data"]["balance"], 3);
}

/// Five duplicates sent while the first is held at the upstream (its fetch
/// has arrived there, and its answer has not come back when they are sent):
/// they wait for it and replay its answer. The overlap is checked, not
/// assumed: each duplicate left before the first's answer arrived.
#[tokio::test]
async fn a_concurrent_duplicate_waits_for_the_first() {
    let (photo, upstream, service, token) = start(5).await;
    upstream.set_delay(&photo.exchanges[0].request.url, Duration::from_secs(3));
    let send = |sent_tx: Option<tokio::sync::oneshot::Sender<std::time::Instant>>| {
        let (url, token, input) = (service.base_url.clone(), token.clone(), photo.input.clone());
        tokio::spawn(async move {
            let request = reqwest::Client::new()
                .post(format!("{url}/api/v1/parse"))
                .bearer_auth(token)
                .header("idempotency-key", "same")
                .json(&json!({"url": input}));
            if let Some(tx) = sent_tx {
                let _ = tx.send(std::time::Instant::now());
            }
            let resp = request.send().await.unwrap();
            let answered = std::time::Instant::now();
            let replayed = resp.headers().contains_key("idempotent-replayed");
            let charged = resp.headers()["x-credits-charged"]
                .to_str()
                .unwrap()
                .to_string();
            (
                resp.status().as_u16(),
                charged,
                replayed,
                resp.text().await.unwrap(),
                answered,
            )
        })
    };
    let first = send(None);
    // The first parse's page request is held at the upstream now.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while upstream.delayed_arrivals().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first parse never reached the upstream"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut duplicates = Vec::new();
    let mut sent_at = Vec::new();
    for _ in 0..5 {
        let (tx, rx) = tokio::sync::oneshot::channel();
        duplicates.push(send(Some(tx)));
        sent_at.push(rx.await.unwrap());
    }
    let first = first.await.unwrap();
    let mut answers = vec![first.clone()];
    for t in duplicates {
        answers.push(t.await.unwrap());
    }
    for (i, sent) in sent_at.iter().enumerate() {
        assert!(
            *sent < first.4,
            "duplicate {i} was sent after the first was answered: no overlap to test"
        );
    }
    assert!(
        answers.iter().all(|a| a.0 == 200 && a.1 == "1"),
        "{answers:?}"
    );
    assert!(!first.2, "the first ran");
    assert!(
        answers[1..].iter().all(|a| a.2),
        "the five duplicates waited and replayed: {answers:?}"
    );
    assert!(answers.iter().all(|a| a.3 == answers[0].3), "one body");
    assert_eq!(
        upstream.delayed_arrivals().len(),
        1,
        "the page was fetched once"
    );
    assert_eq!(account(&service, &token).await["data"]["balance"], 4);
}

#[tokio::test]
async fn a_completed_error_is_answered_again() {
    // No credits: 402 is final (stored), like Stripe's completed errors.
    let (photo, _upstream, service, token) = start(0).await;
    let body = json!({"url": photo.input});
    let first = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("p"),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(
        (first.status, first.body["code"].as_str()),
        (402, Some("insufficient_credits"))
    );
    service.add_credits("default", 5).unwrap();
    let again = parse(
        &service,
        &token,
        "/api/v1/parse",
        Some("p"),
        &[],
        body.clone(),
    )
    .await;
    assert_eq!(
        (again.status, again.replayed),
        (402, true),
        "Stripe: a completed error is the answer"
    );
    // A new key runs now that the balance covers it.
    let fresh = parse(&service, &token, "/api/v1/parse", Some("p2"), &[], body).await;
    assert_eq!((fresh.status, fresh.replayed), (200, false));
}

/// POST one JSON-RPC message to `/mcp` (JSON or one SSE event back).
async fn rpc(
    service: &Service,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, Value) {
    let mut req = reqwest::Client::new()
        .post(service.url("/mcp"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let resp = req.send().await.unwrap();
    let id = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let text = resp.text().await.unwrap_or_default();
    let value = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    });
    (id, value)
}

#[tokio::test]
async fn the_mcp_tool_takes_an_idempotency_key() {
    let (photo, _upstream, service, token) = start(5).await;
    let (session, _) = rpc(
        &service,
        &token,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let session = session.expect("session id");
    rpc(
        &service,
        &token,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let call = |args: Value| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "parse_media", "arguments": args}})
    };
    let (_, first) = rpc(
        &service,
        &token,
        Some(&session),
        call(json!({"url": photo.input, "idempotencyKey": "m1"})),
    )
    .await;
    let (_, again) = rpc(
        &service,
        &token,
        Some(&session),
        call(json!({"url": photo.input, "idempotencyKey": "m1"})),
    )
    .await;
    assert_eq!(first["result"]["_meta"]["creditsCharged"], 1, "{first}");
    assert_eq!(first["result"], again["result"], "the first result, again");
    let (_, conflict) = rpc(
        &service,
        &token,
        Some(&session),
        call(json!({"url": photo.input, "platform": "tiktok", "idempotencyKey": "m1"})),
    )
    .await;
    assert_eq!(conflict["result"]["isError"], true);
    assert_eq!(
        conflict["result"]["structuredContent"]["code"],
        "idempotency_conflict"
    );
    assert_eq!(conflict["result"]["_meta"]["creditsCharged"], 0);
    assert_eq!(account(&service, &token).await["data"]["balance"], 4);
}
