//! The parse cache, over real HTTP: concurrent parses of
//! one post share one upstream extraction; a kept result is served again
//! within its TTL, never past the expiry its media URLs carry; the request's
//! `Cache-Control: no-cache` bypasses it; every parse is still charged; and
//! `Cache-Status` (RFC 9211) says which.

use std::time::Duration;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

fn case(platform: &str, name: &str) -> Case {
    let dir = paths::workspace_root()
        .join("extractors")
        .join(platform)
        .join("fixtures")
        .join(name);
    Case::load(&dir).expect("fixture case")
}

struct Answer {
    status: u16,
    cache_status: String,
    charged: i64,
}

async fn parse(service: &Service, token: &str, input: &str, no_cache: bool) -> Answer {
    parse_at(
        service.url("/api/v1/parse"),
        token.to_string(),
        input.to_string(),
        no_cache,
    )
    .await
}

async fn parse_at(url: String, token: String, input: String, no_cache: bool) -> Answer {
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(&token)
        .json(&json!({ "url": input }));
    if no_cache {
        request = request.header("cache-control", "no-cache");
    }
    let resp = request.send().await.expect("send");
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (cache_status, charged) = (header("cache-status"), header("x-credits-charged"));
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.expect("json");
    assert_eq!(status, 200, "{body}");
    Answer {
        status,
        cache_status,
        charged: charged.parse().expect("x-credits-charged"),
    }
}

fn balance(service: &Service) -> i64 {
    let (code, out) = service
        .cli(&["credits", "show", "--account", "default", "--json"])
        .expect("cli");
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).expect("json");
    v["balance"]
        .as_i64()
        .unwrap_or_else(|| panic!("no balance in {v}"))
}

fn page_requests(upstream: &FakeUpstream, case: &Case) -> usize {
    let page = &case.exchanges[0].request.url;
    upstream
        .hits()
        .iter()
        .filter(|h| h.ends_with(page.as_str()))
        .count()
}

async fn start(
    upstream: &FakeUpstream,
    config: Option<&str>,
) -> (Service, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config.map(|text| {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).expect("config");
        path
    });
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        config,
        extra_args: vec!["--rate-limit".into(), "0".into()],
        ..Default::default()
    })
    .await
    .expect("service");
    service.add_credits("default", 1000).expect("credits");
    let token = service.create_key(&[]).expect("key");
    (service, token, dir)
}

#[tokio::test]
async fn concurrent_parses_of_one_post_share_one_fetch_and_each_is_charged() {
    let post = case("tiktok", "video_post");
    let upstream = FakeUpstream::start(std::slice::from_ref(&post))
        .await
        .unwrap();
    // The page answers late, so all parses arrive while the first is in flight.
    upstream.set_delay(&post.exchanges[0].request.url, Duration::from_millis(800));
    let (service, token, _dir) = start(&upstream, None).await;
    let before = balance(&service);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (url, token, input) = (
                service.url("/api/v1/parse"),
                token.clone(),
                post.input.clone(),
            );
            tokio::spawn(parse_at(url, token, input, false))
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.expect("parse task"));
    }
    assert_eq!(
        page_requests(&upstream, &post),
        1,
        "one upstream extraction for 8 parses"
    );
    let misses = answers
        .iter()
        .filter(|a| a.cache_status.contains("fwd=miss"))
        .count();
    assert_eq!(misses, 1, "one parse extracted");
    assert!(
        answers.iter().all(|a| a.status == 200 && a.charged > 0),
        "every parse is charged"
    );
    let charged: i64 = answers.iter().map(|a| a.charged).sum();
    assert_eq!(before - balance(&service), charged);

    // Within the TTL the result is served again: a hit, charged, no fetch.
    let again = parse(&service, &token, &post.input, false).await;
    assert_eq!(again.cache_status, "mediaparse; hit");
    assert!(again.charged > 0);
    assert_eq!(page_requests(&upstream, &post), 1);

    // `Cache-Control: no-cache` extracts afresh.
    let fresh = parse(&service, &token, &post.input, true).await;
    assert_eq!(fresh.cache_status, "mediaparse; fwd=request");
    assert!(fresh.charged > 0);
    assert_eq!(page_requests(&upstream, &post), 2);

    // The served OpenAPI document names the request header and every value seen.
    let doc: serde_json::Value = reqwest::get(service.url("/openapi.json"))
        .await
        .expect("openapi")
        .json()
        .await
        .expect("openapi json");
    let op = &doc["paths"]["/api/v1/parse"]["post"];
    let params = op["parameters"].as_array().expect("parameters");
    assert!(
        params
            .iter()
            .any(|p| p["name"] == "Cache-Control" && p["in"] == "header"),
        "Cache-Control is documented"
    );
    let documented = &op["responses"]["200"]["headers"]["Cache-Status"]["schema"]["enum"];
    for seen in answers
        .iter()
        .chain([&again, &fresh])
        .map(|a| a.cache_status.as_str())
    {
        assert!(
            documented
                .as_array()
                .is_some_and(|e| e.iter().any(|v| v == seen)),
            "Cache-Status {seen:?} is documented: {documented}"
        );
    }
}

#[tokio::test]
async fn a_result_is_kept_no_longer_than_its_ttl_nor_its_urls_expiry() {
    let tiktok = case("tiktok", "video_post");
    // Its media URLs expired (`oe`) before the tests' clock: never kept.
    let instagram = case("instagram", "graphql_video");
    let upstream = FakeUpstream::start(&[tiktok.clone(), instagram.clone()])
        .await
        .unwrap();
    let (service, token, _dir) = start(
        &upstream,
        Some("[platforms.tiktok.limits]\nparse_cache_ttl_ms = 1500\n"),
    )
    .await;

    assert!(
        parse(&service, &token, &tiktok.input, false)
            .await
            .cache_status
            .contains("fwd=miss")
    );
    assert_eq!(
        parse(&service, &token, &tiktok.input, false)
            .await
            .cache_status,
        "mediaparse; hit"
    );
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert!(
        parse(&service, &token, &tiktok.input, false)
            .await
            .cache_status
            .contains("fwd=miss"),
        "the TTL ran out"
    );
    assert_eq!(page_requests(&upstream, &tiktok), 2);

    let first = parse(&service, &token, &instagram.input, false).await;
    let second = parse(&service, &token, &instagram.input, false).await;
    assert!(first.cache_status.contains("fwd=miss"));
    assert!(
        second.cache_status.contains("fwd=miss"),
        "expired media URLs are not served again"
    );
    assert!(first.charged > 0 && second.charged > 0);
}
