//! Slow and abusive clients: the server's header-read,
//! body-read and idle keep-alive timeouts cut such clients off on time while
//! normal clients are served, and thousands of idle connections do not stop
//! service. Raw TCP on loopback against the real binary.

use std::time::{Duration, Instant};

use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn start(header_ms: u64, body_ms: u64) -> Service {
    Service::start(ServiceOptions {
        extra_args: vec![
            "--header-timeout-ms".into(),
            header_ms.to_string(),
            "--body-timeout-ms".into(),
            body_ms.to_string(),
        ],
        ..Default::default()
    })
    .await
    .unwrap()
}

fn addr(service: &Service) -> String {
    service.base_url.trim_start_matches("http://").to_string()
}

/// Read until the server closes the connection (or `limit` passes); the
/// bytes read and when the close came.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, Option<Instant>) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (out, Some(Instant::now())),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (out, None),
        }
    }
}

/// Longer than any answer takes on a loaded machine: a service that stopped
/// serving never answers, so this bound fails only then.
const PATIENCE: Duration = Duration::from_secs(60);

/// The header and body timeouts under test. A cut-off is checked against
/// it from below (load only makes things later) and, from above, against
/// [`PATIENCE`]: without the timeout the trickling client is never cut off
/// (it trickles for longer than that).
const TIMEOUT: Duration = Duration::from_secs(2);

/// Below Linux's first SYN retransmission timeout (1 s), above any
/// loopback handshake that was not dropped.
const SYN_RETRANSMISSION: Duration = Duration::from_millis(900);

/// A normal client is served.
async fn healthy(service: &Service) {
    let response = tokio::time::timeout(PATIENCE, reqwest::get(service.url("/healthz")))
        .await
        .expect("a normal client is served")
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn slow_loris_headers_are_cut_off_on_time() {
    let service = start(TIMEOUT.as_millis() as u64, 300_000).await;
    let mut stream = TcpStream::connect(addr(&service)).await.unwrap();
    let opened = Instant::now();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    // One header byte every 100 ms, for longer than PATIENCE: never a complete head.
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for _ in 0..1_000 {
            if writer.write_all(b"X").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    healthy(&service).await;
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(PATIENCE, async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => return Instant::now(),
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("the slow-loris connection is still open: the header timeout did not cut it off");
    trickle.abort();
    let cut_off = closed - opened;
    eprintln!("slow-loris cut off after {cut_off:?} (header timeout {TIMEOUT:?})");
    assert!(
        cut_off >= TIMEOUT - Duration::from_millis(100),
        "cut off after {cut_off:?}, before the timeout"
    );
}

/// POST `body` to `path`, one body byte a second (the whole body would take
/// longer than [`PATIENCE`]): the raw answer and when it came, counted from
/// the head.
async fn trickled_answer(
    service: &Service,
    path: &str,
    key: &str,
    body: &'static [u8],
) -> (String, Duration) {
    let mut stream = TcpStream::connect(addr(service)).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let opened = Instant::now();
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    assert!(Duration::from_secs(body.len() as u64) > PATIENCE);
    let trickle = tokio::spawn(async move {
        for byte in body.iter() {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    healthy(service).await;
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    let answered = tokio::time::timeout(PATIENCE, async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => return Instant::now(),
                Ok(n) => {
                    response.extend_from_slice(&buf[..n]);
                    if response.windows(4).any(|w| w == b"\r\n\r\n") && response.ends_with(b"}") {
                        return Instant::now();
                    }
                }
            }
        }
    })
    .await
    .expect("the slow-body request got no answer: the body timeout did not cut it off");
    trickle.abort();
    (
        String::from_utf8_lossy(&response).into_owned(),
        answered - opened,
    )
}

/// A 408 with the error envelope, answered no earlier than the body timeout.
fn assert_timed_out(text: &str, cut_off: Duration) {
    assert!(text.starts_with("HTTP/1.1 408"), "answer: {text}");
    let json: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap_or("")).unwrap();
    assert_eq!(
        (json["status"].as_u64(), json["code"].as_str()),
        (Some(408), Some("request_timeout"))
    );
    assert!(
        cut_off >= TIMEOUT - Duration::from_millis(100),
        "answered after {cut_off:?}, before the timeout"
    );
}

#[tokio::test]
async fn slow_body_is_cut_off_with_408() {
    let service = start(300_000, TIMEOUT.as_millis() as u64).await;
    let key = service.create_key(&[]).unwrap();
    let body = br#"{"url": "https://www.tiktok.com/@someone/video/7305827432509082913"}"#;
    let (text, cut_off) = trickled_answer(&service, "/api/v1/parse", &key, body).await;
    eprintln!("slow body answered after {cut_off:?} (body timeout {TIMEOUT:?})");
    assert_timed_out(&text, cut_off);
}

#[tokio::test]
async fn slow_mcp_body_is_answered_408_not_500() {
    let service = start(300_000, TIMEOUT.as_millis() as u64).await;
    let key = service.create_key(&[]).unwrap();
    let body = br#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "slow", "version": "0"}}}"#;
    let (text, cut_off) = trickled_answer(&service, "/mcp", &key, body).await;
    eprintln!(
        "slow MCP body answered after {cut_off:?} (body timeout {TIMEOUT:?}): {}",
        text.lines().next().unwrap_or("")
    );
    assert_timed_out(&text, cut_off);
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let service = start(TIMEOUT.as_millis() as u64, 300_000).await;
    let mut stream = TcpStream::connect(addr(&service)).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let served = Instant::now();
    let (bytes, closed) = read_until_closed(&mut stream, PATIENCE).await;
    assert!(
        String::from_utf8_lossy(&bytes).starts_with("HTTP/1.1 200"),
        "answer: {}",
        String::from_utf8_lossy(&bytes)
    );
    let idle =
        closed.expect("an idle keep-alive connection is still open: nothing closed it") - served;
    eprintln!("idle keep-alive connection closed after {idle:?} (timeout {TIMEOUT:?})");
}

#[tokio::test]
async fn ten_thousand_idle_connections_do_not_stop_service() {
    // Long timeouts: the idle connections stay open for the whole test.
    let service = start(120_000, 120_000).await;
    let addr = addr(&service);
    let mut idle = Vec::with_capacity(10_000);
    // Connections whose handshake waited for a SYN retransmission (the first
    // comes after a second): the kernel dropped the SYN because the accept
    // queue was full. The client connects far faster than any accept loop
    // takes connections, so the queue's length decides: a backlog of 128
    // overflows within the first thousand or so.
    let mut retransmitted = Vec::new();
    let opening = Instant::now();
    for i in 0..10_000 {
        let t = Instant::now();
        match TcpStream::connect(&addr).await {
            Ok(stream) => idle.push(stream),
            Err(e) => panic!("connection {i} refused: {e}"),
        }
        if t.elapsed() >= SYN_RETRANSMISSION {
            retransmitted.push(i);
        }
    }
    eprintln!(
        "10,000 connections opened in {:?}; {} waited for a SYN retransmission",
        opening.elapsed(),
        retransmitted.len()
    );
    let early: Vec<_> = retransmitted.iter().filter(|&&i| i < 2_000).collect();
    assert!(
        early.is_empty(),
        "connections {early:?} of the first 2,000 had their SYN dropped: the accept queue is too short"
    );
    // Half of them start a request and stop mid-header.
    for stream in idle.iter_mut().step_by(2) {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\n")
            .await
            .unwrap();
    }
    let started = Instant::now();
    for _ in 0..20 {
        healthy(&service).await;
    }
    eprintln!(
        "20 requests served in {:?} beside {} idle connections",
        started.elapsed(),
        idle.len()
    );
    drop(idle);
}
