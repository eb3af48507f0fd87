//! The tunnel leaves through the parse's exit: media URLs may be
//! bound to the IP that asked for them, so a tunnel token names the exit its
//! parse used and the stream goes out through that same proxy. Two real
//! `tinyproxy` exits take turns across parses; each parse's tunnelled media
//! reaches the fake CDN through that parse's proxy and no other.

use mediaparse_sdk::Header;
use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::{FakeUpstream, Route};
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

use super::proxies::Proxy;

/// Every media URL of a parse answer's `data`.
fn media_urls(media: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = media["thumbnail"].as_str().filter(|t| !t.is_empty()) {
        out.push(t.to_string());
    }
    for kind in ["images", "videos", "audios"] {
        for item in media[kind].as_array().into_iter().flatten() {
            out.extend(item["url"].as_str().map(String::from));
        }
    }
    out
}

/// Whether the URL's own `x-expires` (unix seconds) has passed (recorded
/// fixtures): the tunnel answers those `410` without fetching.
fn expired(url: &str) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("x-expires="))
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|e| e < now)
}

/// The path of `url` (what the fake upstream's wire URL and so the proxy's
/// log line contain).
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split('?').next().unwrap_or(path).to_string()
}

async fn parse(service: &Service, token: &str, query: &str, input: &str) -> Value {
    let resp = reqwest::Client::new()
        .post(service.url(&format!("/api/v1/parse{query}")))
        .bearer_auth(token)
        // Each parse must extract (and pick its exit) itself: a result shared
        // from the parse cache keeps the exit of the extraction that made it.
        .header("cache-control", "no-cache")
        .json(&json!({"url": input}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    resp.json().await.unwrap()
}

#[tokio::test]
async fn tunnelled_media_leaves_through_the_exit_of_its_parse() {
    let photo = Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/photo_post"))
        .expect("fixture case");
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let (a, b) = (Proxy::tinyproxy(), Proxy::tinyproxy());
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("mediaparse.toml");
    let exit = |label: &str, port: u16| {
        format!(
            "[[platforms.tiktok.exits]]\nlabel = \"{label}\"\nurl = \"http://127.0.0.1:{port}\"\n"
        )
    };
    std::fs::write(&conf, exit("a", a.port) + &exit("b", b.port)).unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        config: Some(conf),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 100).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();

    // Parse 1 (exit a, direct delivery): the media URLs, served by the fake CDN.
    let direct = media_urls(&parse(&service, &token, "", &photo.input).await["data"]);
    let live: Vec<usize> = (0..direct.len())
        .filter(|i| !expired(&direct[*i]))
        .collect();
    assert!(
        !live.is_empty(),
        "at least one media URL without a past expiry"
    );
    for url in &direct {
        upstream.add_route(Route {
            method: "GET".into(),
            url: url.clone(),
            header_constraints: vec![],
            body_constraint: None,
            status: 200,
            headers: vec![Header::new("content-type", "image/jpeg")],
            body: b"media".to_vec(),
        });
    }
    let api_calls = |p: &Proxy| p.count("GET ") + p.count("POST ");
    let (a_before, b_before) = (api_calls(&a), api_calls(&b));
    assert!(a_before > 0 && b_before == 0, "parse 1 left through a");

    // Parse 2 leaves through b, parse 3 through a; each one's tunnel URLs
    // are fetched after both parses, so only the token can say which exit.
    let second =
        media_urls(&parse(&service, &token, "?delivery=tunnel", &photo.input).await["data"]);
    assert!(api_calls(&b) > b_before, "parse 2 left through b");
    let a_after_second = api_calls(&a);
    assert_eq!(a_after_second, a_before, "parse 2 left through b only");
    let third =
        media_urls(&parse(&service, &token, "?delivery=tunnel", &photo.input).await["data"]);
    assert!(api_calls(&a) > a_after_second, "parse 3 left through a");

    let client = reqwest::Client::new();
    for (tunnelled, through, other) in [(&second, &b, &a), (&third, &a, &b)] {
        assert_eq!(tunnelled.len(), direct.len());
        for &i in &live {
            let media_path = path_of(&direct[i]);
            let (via, not_via) = (through.count(&media_path), other.count(&media_path));
            let got = client.get(&tunnelled[i]).send().await.unwrap();
            assert_eq!(got.status().as_u16(), 200, "{}", direct[i]);
            assert_eq!(got.bytes().await.unwrap().as_ref(), b"media");
            // The fake CDN saw the request arrive through the parse's proxy.
            assert!(through.count(&media_path) > via, "{}", through.log());
            assert_eq!(other.count(&media_path), not_via, "{}", other.log());
        }
    }
}
