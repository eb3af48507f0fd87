//! Every door has the same locks: MCP `parse_media`
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

#[tokio::test]
async fn an_mcp_session_answers_only_the_key_that_opened_it() {
    let (_upstream, service) = start(&[]).await;
    let a = service.create_key(&[]).unwrap();
    let b = service.create_key(&[]).unwrap();
    let session = open(&service, &a).await.unwrap();
    let capabilities = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                              "params": {"name": "get_capabilities", "arguments": {}}});
    // Another key's POST, GET and DELETE under the id: as if it did not exist.
    let (status, _, answer) = rpc(&service, &b, Some(&session), capabilities.clone()).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (404, Some("not_found")),
        "{answer}"
    );
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let resp = reqwest::Client::new()
            .request(method.clone(), service.url("/mcp"))
            .bearer_auth(&b)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 404, "{method} by another key");
    }
    // The key that opened it still has it.
    let (status, _, answer) = rpc(&service, &a, Some(&session), capabilities).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["result"]["structuredContent"].is_object(),
        "{answer}"
    );
}

/// One JSON-RPC request of key `token` opening no session on a fresh
/// connection: its status and how long it took.
async fn timed(
    service: &Service,
    token: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> (u16, std::time::Duration) {
    let client = reqwest::Client::new();
    let mut req = client
        .post(service.url("/mcp"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let started = std::time::Instant::now();
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    resp.bytes().await.unwrap();
    (status, started.elapsed())
}

#[tokio::test]
async fn a_trickling_mcp_client_does_not_delay_another_key() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_upstream, service) = start(&[]).await;
    let a = service.create_key(&[]).unwrap();
    let b = service.create_key(&[]).unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "b", "version": "0"}}});
    let stateless = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "get_capabilities", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "io.modelcontextprotocol/clientInfo": {"name": "b", "version": "0"}}}});
    // The stateless revision names the call in headers too.
    let stateless_headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "get_capabilities"),
    ];
    let calls = [(&initialize, &[][..]), (&stateless, &stateless_headers[..])];
    // B alone: the baseline.
    let mut alone = Vec::new();
    for (body, headers) in calls {
        for _ in 0..3 {
            let (status, took) = timed(&service, &b, body, headers).await;
            assert_eq!(status, 200);
            alone.push(took);
        }
    }
    // Key A opens a request and trickles its 300-byte body at 1 byte/s.
    let mut stream = tokio::net::TcpStream::connect(service.base_url.trim_start_matches("http://"))
        .await
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {a}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 300\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let (sent_tx, mut sent) = tokio::sync::mpsc::unbounded_channel();
    let trickle = tokio::spawn(async move {
        for i in 0..300 {
            if writer.write_all(b" ").await.is_err() {
                return;
            }
            let _ = sent_tx.send(i);
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    });
    // A's head and first bytes are in: its request is being read.
    for _ in 0..2 {
        sent.recv().await.unwrap();
    }
    let mut beside = Vec::new();
    for (body, headers) in calls {
        for _ in 0..3 {
            let (status, took) = timed(&service, &b, body, headers).await;
            assert_eq!(status, 200);
            beside.push(took);
        }
    }
    let ms = |d: &[std::time::Duration]| d.iter().map(|d| d.as_millis()).collect::<Vec<_>>();
    eprintln!(
        "key B's initialize ×3 then stateless tools/call ×3, ms: alone {:?}, beside a trickling key A {:?}",
        ms(&alone),
        ms(&beside)
    );
    // A is still trickling, unanswered: B ran beside it, not after it.
    let mut byte = [0u8; 1];
    let answered =
        tokio::time::timeout(std::time::Duration::from_millis(10), reader.read(&mut byte)).await;
    assert!(answered.is_err(), "A was answered before its body arrived");
    trickle.abort();
    // Margin for a loaded machine: a wait for A's body would be seconds
    // (A needs 300 s; the body timeout is 30 s).
    let slowest_alone = alone.iter().max().copied().unwrap_or_default();
    for took in &beside {
        assert!(
            *took < slowest_alone + std::time::Duration::from_millis(1_000),
            "B waited for A: {:?} beside A, {:?} alone",
            ms(&beside),
            ms(&alone)
        );
    }
}
