//! Network edges: an upstream body is capped however it
//! arrives — a gzip or brotli bomb stops at the cap of inflated bytes, and a
//! `Content-Length` over the cap is refused before the body is read. A raw
//! HTTP/1.1 upstream on loopback; the cap is `MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES`.

use std::io::Write;
use std::time::{Duration, Instant};

use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const CAP: usize = 256 * 1024;
/// What a bomb inflates to: 256 times the cap.
const INFLATED: usize = 64 * 1024 * 1024;

/// Serve `head` + `body` to every request and keep the socket open for `hold`.
async fn upstream(head: String, body: Vec<u8>, hold: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (head, body) = (head.clone(), body.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
                tokio::time::sleep(hold).await;
            });
        }
    });
    format!("http://{addr}/")
}

async fn parse_through(upstream: String) -> (u16, Value, Duration) {
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream),
        extra_env: vec![
            ("MEDIAPARSE_UPSTREAM_TIMEOUT_MS".into(), "10000".into()),
            ("MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES".into(), CAP.to_string()),
        ],
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 100).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let started = Instant::now();
    let resp = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": "https://www.tiktok.com/@edge/video/7000000000000000009"}))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    (status, body, started.elapsed())
}

fn bomb_head(encoding: &str, len: usize) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: {encoding}\r\n\
         Content-Length: {len}\r\nConnection: close\r\n\r\n"
    )
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_cap() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&vec![b'a'; INFLATED]).unwrap();
    let bomb = gz.finish().unwrap();
    let head = bomb_head("gzip", bomb.len());
    let (status, body, took) = parse_through(upstream(head, bomb, Duration::ZERO).await).await;
    eprintln!("gzip bomb ({INFLATED} bytes inflated) answered {status} in {took:?}: {body}");
    assert_eq!(
        (status, body["code"].as_str()),
        (502, Some("upstream_error")),
        "{body}"
    );
    assert!(
        body["msg"].as_str().unwrap_or("").contains("larger than"),
        "{body}"
    );
}

#[tokio::test]
async fn a_brotli_bomb_stops_at_the_cap() {
    let mut bomb = Vec::new();
    {
        // Repeated bytes compress to a few KiB at any quality; a low one
        // keeps this test's own compression quick in a debug build.
        let mut w = brotli::CompressorWriter::new(&mut bomb, 64 * 1024, 2, 22);
        w.write_all(&vec![b'a'; INFLATED]).unwrap();
    }
    assert!(
        bomb.len() < INFLATED / 1000,
        "{} bytes: not a bomb",
        bomb.len()
    );
    let head = bomb_head("br", bomb.len());
    let (status, body, took) = parse_through(upstream(head, bomb, Duration::ZERO).await).await;
    eprintln!("brotli bomb ({INFLATED} bytes inflated) answered {status} in {took:?}: {body}");
    assert_eq!(
        (status, body["code"].as_str()),
        (502, Some("upstream_error")),
        "{body}"
    );
    assert!(
        body["msg"].as_str().unwrap_or("").contains("larger than"),
        "{body}"
    );
}

#[tokio::test]
async fn a_content_length_over_the_cap_is_refused_before_the_body() {
    // Announce 10 MiB, send nothing, hold the connection: only an early
    // refusal answers before the 10 s upstream timeout.
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
        10 * 1024 * 1024
    );
    let (status, body, took) =
        parse_through(upstream(head, Vec::new(), Duration::from_secs(30)).await).await;
    eprintln!("Content-Length over the cap answered {status} in {took:?}: {body}");
    assert_eq!(
        (status, body["code"].as_str()),
        (502, Some("upstream_error")),
        "{body}"
    );
    assert!(
        took < Duration::from_secs(5),
        "took {took:?}: the body was waited for"
    );
}
