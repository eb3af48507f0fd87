//! The tunnel's guards, end to end with the real binary and the fake CDN:
//! documents never render on the service's origin, a client that stops
//! reading gives its stream back, requests keep a per-key rate and the
//! exit's pace, tokens die with their key, and no token or invitation
//! secret reaches the log.

use std::time::{Duration, Instant};

use mediaparse_tests::fake_cdn::Source;
use mediaparse_tests::service::ServiceOptions;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::media::Rig;
use super::parse;

/// The operator token the rigs that need the admin API or `/metrics` use.
const ADMIN_TOKEN: &str = "an-operator-token-of-at-least-32-bytes-long";

/// Create a key for the rig's account; its (id, token).
fn key(rig: &Rig) -> (String, String) {
    let (code, out) = rig
        .service
        .cli(&[
            "keys",
            "create",
            "--name",
            "t",
            "--rate-limit",
            "off",
            "--json",
        ])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    (
        v["id"].as_str().unwrap().to_string(),
        v["token"].as_str().unwrap().to_string(),
    )
}

/// The first video's tunnel URL of a fresh tunnel parse with `token`.
async fn tunnel_url(rig: &Rig, token: &str) -> String {
    let resp = parse(&rig.service, token, "?delivery=tunnel", &rig.input).await;
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.unwrap();
    body["data"]["videos"][0]["url"]
        .as_str()
        .unwrap()
        .to_string()
}

fn assert_guarded(resp: &reqwest::Response, what: &str) {
    assert_eq!(
        resp.headers()["x-content-type-options"],
        "nosniff",
        "{what}"
    );
    assert_eq!(
        resp.headers()["content-security-policy"],
        "sandbox",
        "{what}"
    );
}

#[tokio::test]
async fn html_and_svg_from_the_cdn_are_downloads_never_documents() {
    let rig = Rig::start_with(ServiceOptions::default()).await;
    let script = "<script>alert(document.cookie)</script>";
    let cases = [
        (
            "text/html; charset=utf-8",
            format!("<html><body>{script}</body></html>"),
        ),
        (
            "image/svg+xml",
            format!("<svg xmlns=\"http://www.w3.org/2000/svg\">{script}</svg>"),
        ),
        ("video/mp4", "not really an mp4".to_string()),
    ];
    let client = reqwest::Client::new();
    for (i, (content_type, body)) in cases.iter().enumerate() {
        let (url, referer, tunnel) = rig.item("videos", i);
        rig.file(
            &url,
            Source::Bytes(body.clone().into_bytes().into()),
            content_type,
            &referer,
        );
        let got = client.get(&tunnel).send().await.unwrap();
        assert_eq!(got.status().as_u16(), 200, "{content_type}");
        assert_guarded(&got, content_type);
        let served = got.headers()["content-type"].to_str().unwrap().to_string();
        let disposition = got
            .headers()
            .get("content-disposition")
            .map(|v| v.to_str().unwrap().to_string());
        if content_type.starts_with("video/") {
            assert_eq!(served, "video/mp4");
            assert_eq!(disposition, None);
        } else {
            assert_eq!(served, "application/octet-stream", "{content_type}");
            assert_eq!(disposition.as_deref(), Some("attachment"), "{content_type}");
        }
        // The bytes themselves are relayed untouched (a download, not a page).
        assert_eq!(got.text().await.unwrap(), *body);
    }
    // Refusals from the tunnel carry the same guards.
    let refused = client
        .get(rig.service.url("/api/v1/tunnel/not-a-token"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 404);
    assert_guarded(&refused, "a refusal");
}

/// A raw HTTP/1.1 GET of `url` on a socket with a small receive buffer
/// that reads `read` bytes of the answer and then stops reading (but stays open).
async fn stalled_reader(url: &str, read: usize) -> tokio::net::TcpStream {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(authority.parse().unwrap()).await.unwrap();
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0; 4096];
    while got.len() < read {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "the answer ended early: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got[..64])
    );
    stream
}

#[tokio::test]
async fn clients_that_stop_reading_give_their_streams_back() {
    // Long enough that setting up the 8 stalled streams on a loaded machine
    // ends before the first of them times out.
    let write_timeout = Duration::from_secs(8);
    let rig = Rig::start_with(ServiceOptions {
        extra_args: vec![
            "--response-write-timeout-ms".into(),
            write_timeout.as_millis().to_string(),
        ],
        admin_token: Some(ADMIN_TOKEN.into()),
        ..Default::default()
    })
    .await;
    let (url, referer, tunnel) = rig.item("videos", 0);
    rig.file(&url, Source::Pattern(1 << 30), "video/mp4", &referer);
    // The key's 8 streams (the default), each read for 64 KiB and then left.
    let mut stalled = Vec::new();
    for _ in 0..8 {
        stalled.push(stalled_reader(&tunnel, 64 * 1024).await);
    }
    let client = reqwest::Client::new();
    let ninth = client.head(&tunnel).send().await.unwrap();
    assert_eq!(
        ninth.status().as_u16(),
        429,
        "the 8 stalled streams are held"
    );
    // Within the write timeout (plus a wide margin for a loaded machine)
    // the stalled connections are closed and a 9th stream is admitted.
    let started = Instant::now();
    let deadline = started + write_timeout + Duration::from_secs(30);
    let admitted = loop {
        let resp = client.head(&tunnel).send().await.unwrap();
        if resp.status().as_u16() == 200 {
            break started.elapsed();
        }
        assert_eq!(resp.status().as_u16(), 429);
        assert!(
            Instant::now() < deadline,
            "the stalled streams were still held after {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Every stalled stream is released (the gauge of open streams drops to 0)…
    let open_streams = || async {
        let text = client
            .get(rig.service.url("/metrics"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find(|l| l.starts_with("mediaparse_tunnel_streams{platform=\"bilibili\"}"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .expect("the open tunnel streams gauge in /metrics")
    };
    while open_streams().await > 0.0 {
        assert!(
            Instant::now() < deadline,
            "stalled streams still open after {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // …and the stalled sockets see their connection closed (after what was buffered).
    let mut closed = 0;
    for mut s in stalled {
        let mut buf = vec![0; 1 << 20];
        let end = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await;
        closed += usize::from(end.is_ok());
    }
    assert_eq!(closed, 8, "every stalled connection was closed");
    eprintln!("9th stream admitted {admitted:?} after the 429");
}

#[tokio::test]
async fn tunnel_requests_keep_a_per_key_rate_head_included() {
    let rig = Rig::start_with(ServiceOptions {
        extra_args: vec!["--tunnel-requests-per-minute".into(), "3".into()],
        ..Default::default()
    })
    .await;
    let (url, referer, tunnel) = rig.item("videos", 0);
    rig.file(&url, Source::Pattern(1000), "video/mp4", &referer);
    let client = reqwest::Client::new();
    for i in 0..3 {
        let resp = client.head(&tunnel).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "HEAD {i}");
    }
    for method in [reqwest::Method::HEAD, reqwest::Method::GET] {
        let resp = client
            .request(method.clone(), &tunnel)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 429, "{method}");
        let after: u64 = resp.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&after), "{after}");
        if method == reqwest::Method::GET {
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["code"], "tunnel_limited");
        }
    }
    // Another key has its own allowance.
    let (_, other) = key(&rig);
    let other_url = tunnel_url(&rig, &other).await;
    let resp = client.head(&other_url).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}

#[tokio::test]
async fn tunnel_requests_keep_the_exits_pace() {
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("mediaparse.toml");
    std::fs::write(
        &conf,
        "[platforms.bilibili.limits]\nrequests_per_second = 1\n",
    )
    .unwrap();
    let rig = Rig::start_with(ServiceOptions {
        config: Some(conf),
        ..Default::default()
    })
    .await;
    let (url, referer, tunnel) = rig.item("videos", 0);
    rig.file(&url, Source::Pattern(1000), "video/mp4", &referer);
    let client = reqwest::Client::new();
    // One request per second through the exit: four in a row span at least
    // three pace intervals (a loaded machine only makes this slower).
    let started = Instant::now();
    for i in 0..4 {
        let resp = client.head(&tunnel).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "HEAD {i}");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(2500),
        "4 paced requests took {took:?}"
    );
}

#[tokio::test]
async fn tunnel_tokens_die_with_their_key() {
    let rig = Rig::start_with(ServiceOptions::default()).await;
    let (url, referer, _) = rig.item("videos", 0);
    rig.file(&url, Source::Pattern(1000), "video/mp4", &referer);
    let client = reqwest::Client::new();
    for change in ["reset", "delete", "expire"] {
        let (id, token) = key(&rig);
        let tunnel = tunnel_url(&rig, &token).await;
        let before = client.get(&tunnel).send().await.unwrap();
        assert_eq!(before.status().as_u16(), 200, "{change}: before");
        let args: Vec<&str> = match change {
            "reset" => vec!["keys", "reset", &id, "--json"],
            "delete" => vec!["keys", "delete", &id, "--json"],
            _ => vec!["keys", "edit", &id, "--expires", "2000-01-01", "--json"],
        };
        let (code, out) = rig.service.cli(&args).unwrap();
        assert_eq!(code, 0, "{change}: {out}");
        let after = client.get(&tunnel).send().await.unwrap();
        assert_eq!(after.status().as_u16(), 410, "{change}: after");
        let body: Value = after.json().await.unwrap();
        assert_eq!(body["code"], "tunnel_expired", "{change}");
    }
    // A key left alone keeps its tokens working.
    let kept = client
        .get(rig.tunnel["videos"][0]["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status().as_u16(), 200);
}

#[tokio::test]
async fn tunnel_tokens_and_invitation_secrets_stay_out_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("service.log");
    let admin = ADMIN_TOKEN;
    let rig = Rig::start_with(ServiceOptions {
        log_file: Some(log.clone()),
        admin_token: Some(admin.into()),
        extra_env: vec![("RUST_LOG".into(), "info".into())],
        ..Default::default()
    })
    .await;
    let (url, referer, tunnel) = rig.item("videos", 0);
    rig.file(&url, Source::Pattern(1000), "video/mp4", &referer);
    let client = reqwest::Client::new();
    let got = client.get(&tunnel).send().await.unwrap();
    assert_eq!(got.status().as_u16(), 200);
    got.bytes().await.unwrap();
    let token = tunnel.rsplit('/').next().unwrap().to_string();
    // An altered token is refused (and logged as refused).
    let altered = format!("{tunnel}x");
    assert_eq!(
        client.get(&altered).send().await.unwrap().status().as_u16(),
        404
    );

    let invited: Value = client
        .post(rig.service.url("/api/v1/admin/users"))
        .bearer_auth(admin)
        .json(&json!({"account": "default", "email": "someone@example.com"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let link = invited["data"]["link"].as_str().unwrap().to_string();
    let secret = link.rsplit('/').next().unwrap().to_string();
    assert!(secret.len() >= 16, "{link}");
    let local = rig.service.url(&format!("/console/invite/{secret}"));
    let page = client.get(&local).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let _ = client
        .post(&local)
        .form(&[("password", "short"), ("csrf", "wrong")])
        .send()
        .await
        .unwrap();

    // The log has the requests (redacted), never the capabilities.
    let mut text = String::new();
    for _ in 0..50 {
        text = std::fs::read_to_string(&log).unwrap();
        if text.contains("/api/v1/tunnel/{redacted}") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!text.contains(&token), "the tunnel token is in the log");
    assert!(
        !text.contains(&token[..24]),
        "part of the tunnel token is in the log"
    );
    assert!(
        !text.contains(&secret),
        "the invitation secret is in the log"
    );
    assert!(
        text.contains("/api/v1/tunnel/{redacted}"),
        "the tunnel requests are logged: {text}"
    );
}
