//! The `RateLimit-Policy` and `RateLimit` headers (IETF
//! draft-ietf-httpapi-ratelimit-headers) on the real binary: a key limited
//! to a few requests a minute sees its quota in the policy and what is left
//! go down by one per request, the `429` says `r=0` with the same wait as its
//! `Retry-After`, the account view has its own policy, and a key whose limit
//! is off gets neither header. Every parse answer is checked against
//! `docs/openapi.json`.

use mediaparse_tests::contract;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::service::{Service, ServiceOptions};
use reqwest::header::HeaderMap;
use serde_json::json;

const TIKTOK_URL: &str = "https://www.tiktok.com/@someone/video/7305827432509082913";

async fn start() -> (FakeUpstream, Service) {
    let upstream = FakeUpstream::with_routes(vec![]).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000).unwrap();
    (upstream, service)
}

/// One parse as `token`: its status and headers, checked against the contract.
async fn parse(service: &Service, token: &str) -> (u16, HeaderMap) {
    let response = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(token)
        .json(&json!({"url": TIKTOK_URL}))
        .send()
        .await
        .unwrap();
    let (status, headers, _) = contract::read("POST", response).await;
    (status, headers)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A `"name";a=1;b=2` structured-field item: its name and its parameters.
fn item(value: &str) -> (String, Vec<(String, u64)>) {
    let mut parts = value.split(';');
    let name = parts.next().unwrap_or_default();
    assert!(
        name.len() >= 2 && name.starts_with('"') && name.ends_with('"'),
        "the policy name is not a string: {value:?}"
    );
    let params = parts
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or_else(|| panic!("{value:?}"));
            (
                k.to_string(),
                v.parse().unwrap_or_else(|_| panic!("{value:?}")),
            )
        })
        .collect();
    (name.trim_matches('"').to_string(), params)
}

/// The policy (name, q, w) and status (name, r, t) of an answer.
fn rate_of(headers: &HeaderMap) -> ((String, u64, u64), (String, u64, u64)) {
    let policy = header(headers, "ratelimit-policy").expect("RateLimit-Policy missing");
    let status = header(headers, "ratelimit").expect("RateLimit missing");
    let (pname, pparams) = item(policy);
    let (sname, sparams) = item(status);
    let get = |params: &[(String, u64)], k: &str| {
        params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no {k} in {policy:?} / {status:?}"))
    };
    (
        (pname, get(&pparams, "q"), get(&pparams, "w")),
        (sname, get(&sparams, "r"), get(&sparams, "t")),
    )
}

#[tokio::test]
async fn each_answer_says_the_limit_and_what_is_left_down_to_the_429() {
    let (_upstream, service) = start().await;
    // 3 a minute: one request back every 20 s, far more than the test takes.
    let token = service.create_key(&["--rate-limit", "3"]).unwrap();
    let mut seen = Vec::new();
    for sent in 1..=3u64 {
        let (status, headers) = parse(&service, &token).await;
        assert_ne!(status, 429, "request {sent} of 3 refused");
        let ((policy, q, w), (name, r, t)) = rate_of(&headers);
        assert_eq!((policy.as_str(), q, w), ("parse", 3, 60), "{headers:?}");
        assert_eq!(name, policy);
        seen.push(r);
        // The whole quota is back 20 s per request taken.
        assert!(t <= 20 * sent && t > 20 * (sent - 1), "t={t} after {sent}");
    }
    assert_eq!(seen, [2, 1, 0], "remaining after each request");
    let (status, headers) = parse(&service, &token).await;
    assert_eq!(status, 429);
    let retry_after: u64 = header(&headers, "retry-after")
        .expect("429 without Retry-After")
        .parse()
        .unwrap();
    let ((policy, q, _), (_, r, t)) = rate_of(&headers);
    assert_eq!((policy.as_str(), q, r), ("parse", 3, 0));
    assert_eq!(t, retry_after, "the 429's t is its Retry-After");
    assert!((1..=20).contains(&retry_after), "{retry_after}");

    // The account view is counted apart, under its own policy.
    let response = reqwest::Client::new()
        .get(service.url("/api/v1/account"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let ((policy, q, _), (_, r, _)) = rate_of(response.headers());
    assert_eq!((policy.as_str(), q, r), ("account", 3, 2));
}

#[tokio::test]
async fn no_headers_without_a_limit_or_before_the_token_is_accepted() {
    let (_upstream, service) = start().await;
    let unlimited = service.create_key(&["--rate-limit", "off"]).unwrap();
    let (status, headers) = parse(&service, &unlimited).await;
    assert_ne!(status, 429);
    assert!(
        header(&headers, "ratelimit-policy").is_none(),
        "{headers:?}"
    );
    assert!(header(&headers, "ratelimit").is_none(), "{headers:?}");
    // A limited key with a wrong token: 401, nothing said about any limit.
    service.create_key(&["--rate-limit", "3"]).unwrap();
    let (status, headers) = parse(&service, "mp_live_not-a-real-token").await;
    assert_eq!(status, 401);
    assert!(
        header(&headers, "ratelimit-policy").is_none(),
        "{headers:?}"
    );
}
