//! Every door has the same locks (issue 19, item 1): MCP `parse_media`
//! spends the same per-key rate limit as REST, MCP sessions are bounded per
//! key and overall, and the account view is rate limited. Real binary, raw
//! JSON-RPC over HTTP on loopback.

use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const TIKTOK_URL: &str = "https://www.tiktok.com/@someone/video/7305827432509082913";

async fn start(args: &[&str]) -> (FakeUpstream, Service) {
    let upstream = FakeUpstream::with_routes(vec![]).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        extra_args: args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000).unwrap();
    (upstream, service)
}

/// POST one JSON-RPC message to `/mcp`: status, session id, the answer.
async fn rpc(
    service: &Service,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, Value) {
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
    let status = resp.status().as_u16();
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
    (status, id, value)
}

/// Open a session (initialize + initialized); its id, or the refusal's status and body.
async fn open(service: &Service, token: &str) -> Result<String, (u16, Value)> {
    let (status, id, answer) = rpc(
        service,
        token,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    let Some(id) = id.filter(|_| status == 200) else {
        return Err((status, answer));
    };
    rpc(
        service,
        token,
        Some(&id),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    Ok(id)
}

#[tokio::test]
async fn mcp_parse_media_spends_the_rest_rate_limit() {
    let (_upstream, service) = start(&[]).await;
    let token = service.create_key(&["--rate-limit", "3"]).unwrap();
    let session = open(&service, &token).await.unwrap();
    let mut codes = Vec::new();
    for id in 0..6 {
        let (_, _, answer) = rpc(
            &service,
            &token,
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 10 + id, "method": "tools/call",
                   "params": {"name": "parse_media", "arguments": {"url": TIKTOK_URL}}}),
        )
        .await;
        codes.push(
            answer["result"]["structuredContent"]["code"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        );
    }
    eprintln!("MCP parse_media codes with 3 requests/minute: {codes:?}");
    let limited = codes.iter().filter(|c| *c == "rate_limited").count();
    assert!(limited >= 3, "MCP skipped the rate limit: {codes:?}");
    // The bucket is the key's, whichever door spent it.
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": TIKTOK_URL}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 429);
    assert!(resp.headers().get("retry-after").is_some());
}

#[tokio::test]
async fn mcp_sessions_are_bounded_per_key_and_overall() {
    let (_upstream, service) =
        start(&["--mcp-max-sessions-per-key", "3", "--mcp-max-sessions", "5"]).await;
    let a = service.create_key(&[]).unwrap();
    let b = service.create_key(&[]).unwrap();
    let mut of_a = Vec::new();
    for _ in 0..3 {
        of_a.push(open(&service, &a).await.unwrap());
    }
    let (status, body) = open(&service, &a).await.unwrap_err();
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("overloaded")),
        "{body}"
    );
    // Key b: two more reach the overall bound of 5.
    open(&service, &b).await.unwrap();
    open(&service, &b).await.unwrap();
    let (status, body) = open(&service, &b).await.unwrap_err();
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("overloaded")),
        "{body}"
    );
    // Closing a session frees its place.
    let closed = reqwest::Client::new()
        .delete(service.url("/mcp"))
        .bearer_auth(&a)
        .header("mcp-session-id", &of_a[0])
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert!(
        closed.status().is_success(),
        "DELETE answered {}",
        closed.status()
    );
    open(&service, &a).await.unwrap();
}

#[tokio::test]
async fn the_account_view_is_rate_limited() {
    let (_upstream, service) = start(&[]).await;
    let token = service.create_key(&["--rate-limit", "3"]).unwrap();
    let mut statuses = Vec::new();
    for _ in 0..6 {
        let resp = reqwest::Client::new()
            .get(service.url("/api/v1/account"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        statuses.push(resp.status().as_u16());
    }
    eprintln!("account view statuses with 3 requests/minute: {statuses:?}");
    assert!(statuses.contains(&200));
    assert!(
        statuses.iter().filter(|s| **s == 429).count() >= 3,
        "{statuses:?}"
    );
}
