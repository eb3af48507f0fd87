//! The HTTP layer in-process: `router(state).oneshot(request)` against a
//! real SQLite store in a temporary folder and an empty registry (no
//! component is needed for what the handlers decide themselves; the `304`
//! answer uses the test guest). Every error answer is checked against its
//! row of the error table.

use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::envelope::CREDITS_HEADER;
use super::mcp::McpSettings;
use super::state::AppState;
use mediaparse_auth::ratelimit::RateLimits;
use mediaparse_config::OperatorConfig;
use mediaparse_core::{Clock, ParseLimits};
use mediaparse_fetch::{FetchLimits, Fetcher};
use mediaparse_operator::{self as operator, KeySpec};
use mediaparse_parse::Services;
use mediaparse_registry::{Registry, Runtime, SandboxLimits, testing};
use mediaparse_reload::ConfigSource;
use mediaparse_store::Store;

const OPERATOR: &str = "operator-secret-token-for-the-http-tests";
/// 2026-11-22T12:00:00Z, the fixed key-expiry clock.
const NOW_S: i64 = 1_795_348_800;

/// One wasm runtime for every test: its pooling allocator reserves a lot.
fn runtime() -> Arc<Runtime> {
    static RUNTIME: OnceLock<Arc<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| Runtime::new(SandboxLimits::default()).expect("wasm runtime"))
        .clone()
}

struct Harness {
    _dir: tempfile::TempDir,
    store: Store,
    state: Arc<AppState>,
}

fn harness(admin_token: Option<&str>) -> Harness {
    harness_with(admin_token, declared_only())
}

/// One registry serving the test guest as `tiktok`, compiled once.
fn test_guest_registry() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| testing::serving_test_guest(runtime(), "tiktok"))
        .clone()
}

/// A registry that knows `tiktok` from its `tiktok.toml` but serves no
/// component (a platform declared, not loaded).
fn declared_only() -> Arc<Registry> {
    testing::declaring(runtime(), "tiktok")
}

fn harness_with(admin_token: Option<&str>, registry: Arc<Registry>) -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("t.db")).expect("store");
    let services = Arc::new(Services {
        store: store.clone(),
        registry,
        fetcher: Arc::new(Fetcher::new(None, FetchLimits::default()).expect("fetcher")),
        limits: ParseLimits::default(),
        config: Arc::new(ArcSwap::from_pointee(OperatorConfig::default())),
        clock: Clock {
            fixed_parse_ms: Some(1_000),
            fixed_auth_s: Some(NOW_S),
        },
        exits: Default::default(),
        pacer: Default::default(),
        sessions: Default::default(),
        admission: mediaparse_parse::admission::Admission::new(Default::default()),
        cache: mediaparse_parse::cache::ParseCache::new(),
        health: Default::default(),
        failures: None,
    });
    let tunnel = Arc::new(mediaparse_tunnel::TunnelSettings {
        public_base_url: "http://mp.test".into(),
        ttl: std::time::Duration::from_secs(3600),
        keys: mediaparse_tunnel::Keyring::random(),
        fetcher: Arc::new(Fetcher::new(None, FetchLimits::default()).expect("fetcher")),
        meter: mediaparse_tunnel::limits::Meter::new(Default::default(), store.clone()),
        merge: mediaparse_tunnel::merge::MergeSettings::unavailable(),
    });
    let webhooks = mediaparse_webhooks::Webhooks::new(
        store.clone(),
        services.config.clone(),
        mediaparse_webhooks::Mode::Production,
    );
    let state = Arc::new(AppState {
        jobs: mediaparse_jobs::Jobs::new(services.clone(), tunnel.clone(), webhooks.clone()),
        services: services.clone(),
        config_source: Arc::new(ConfigSource::default()),
        admin_token: admin_token.map(String::from),
        max_body_bytes: 64 * 1024,
        rate_limits: RateLimits::new(None, "parse"),
        account_rate_limits: RateLimits::new(None, "account"),
        mcp: McpSettings::default(),
        tunnel,
        guards: Default::default(),
        metrics_elsewhere: false,
        webhooks,
    });
    Harness {
        _dir: dir,
        store,
        state,
    }
}

impl Harness {
    /// A key of account `acme` (with `credits`), expiring on `expires_on`.
    fn key(&self, expires_on: Option<&str>, credits: i64) -> String {
        let issued = operator::create_key(
            &self.store,
            KeySpec {
                name: "test".into(),
                account: "acme".into(),
                expires_on: expires_on.map(String::from),
                platforms: None,
                rate_limit_per_minute: None,
            },
            NOW_S - 86_400,
        )
        .expect("create key");
        if credits > 0 {
            self.store
                .add_credits("acme", credits, NOW_S)
                .expect("credits");
        }
        issued.token
    }

    async fn send(&self, request: Request<Body>) -> Answer {
        let response = super::router(self.state.clone())
            .oneshot(request)
            .await
            .expect("infallible");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        Answer {
            status,
            credits: headers
                .get(CREDITS_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(String::from),
            retry_after: headers.contains_key(header::RETRY_AFTER),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }
}

struct Answer {
    status: StatusCode,
    credits: Option<String>,
    retry_after: bool,
    body: Value,
}

impl Answer {
    /// The error envelope with `status` and `code`, written out as the
    /// contract states them, never read from the error table under test:
    /// SPEC.md's "Known errors" table for the codes it lists (`401
    /// missing_token`, `401 invalid_token`, `401 token_expired`, `400 "302"`),
    /// DESIGN.md's "Errors we add where SPEC.md is silent" and README's list
    /// for the rest.
    fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status.as_u16(), status, "{}", self.body);
        assert_eq!(self.body["status"], status, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert_eq!(self.body["data"], Value::Null);
        assert!(self.body["msg"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

fn request(method: Method, path: &str, token: Option<&str>, body: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(t) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    if body.is_some() {
        builder = builder.header(header::CONTENT_TYPE, "application/json");
    }
    builder
        .body(Body::from(body.unwrap_or_default().to_string()))
        .expect("request")
}

fn parse(token: Option<&str>, body: &str) -> Request<Body> {
    request(Method::POST, "/api/v1/parse", token, Some(body))
}

const URL_BODY: &str = r#"{"url":"https://www.tiktok.com/@a/video/1"}"#;

#[tokio::test]
async fn missing_unknown_and_expired_tokens_are_401_envelopes_that_cost_nothing() {
    let h = harness(None);
    let expired = h.key(Some("2026-11-21"), 10);
    for (token, status, code) in [
        (None, 401, "missing_token"),
        (Some("mp_live_nobody"), 401, "invalid_token"),
        (Some(expired.as_str()), 401, "token_expired"),
    ] {
        let answer = h.send(parse(token, URL_BODY)).await;
        answer.assert_error(status, code);
        assert_eq!(answer.credits.as_deref(), Some("0"));
    }
    // The account view answers the same codes, also at no cost.
    let answer = h
        .send(request(Method::GET, "/api/v1/account", None, None))
        .await;
    answer.assert_error(401, "missing_token");
    assert_eq!(answer.credits.as_deref(), Some("0"));
}

#[tokio::test]
async fn bodies_are_refused_by_the_one_extractor_in_the_envelope() {
    let h = harness(None);
    let token = h.key(None, 10);
    for bad in ["not json", r#"{"url":5}"#, r#"{"url":"x","extra":1}"#, "{}"] {
        h.send(parse(Some(&token), bad))
            .await
            .assert_error(400, "invalid_request");
    }
    let text = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/parse")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "text/plain")
        .body(Body::from(URL_BODY))
        .expect("request");
    h.send(text)
        .await
        .assert_error(415, "unsupported_media_type");
    let huge = format!(r#"{{"url":"{}"}}"#, "a".repeat(70 * 1024));
    h.send(parse(Some(&token), &huge))
        .await
        .assert_error(413, "payload_too_large");
    // The token is checked before the body: a bad body without one is a 401.
    h.send(parse(None, "not json"))
        .await
        .assert_error(401, "missing_token");
}

#[tokio::test]
async fn unknown_platform_path_is_404_and_known_platform_without_extractor_is_503() {
    let h = harness(None);
    let token = h.key(None, 10);
    let at = |platform: &str| {
        request(
            Method::POST,
            &format!("/api/v1/platforms/{platform}/parse"),
            Some(&token),
            Some(URL_BODY),
        )
    };
    h.send(at("myspace"))
        .await
        .assert_error(404, "unknown_platform");
    // A platform id with no component loaded: no extractor, nothing charged.
    let answer = h.send(at("tiktok")).await;
    answer.assert_error(503, "extractor_unavailable");
    assert_eq!(answer.credits.as_deref(), Some("0"));
    assert!(!answer.retry_after);
    // The common endpoint: a host no platform serves is SPEC's 302.
    h.send(parse(Some(&token), r#"{"url":"https://example.org/x"}"#))
        .await
        .assert_error(400, "302");
    assert_eq!(h.store.ledger_count(None).expect("ledger"), 0);
}

#[tokio::test]
async fn capabilities_are_public_and_price_every_platform_as_billing_does() {
    let h = harness_with(None, test_guest_registry());
    let answer = h
        .send(request(Method::GET, "/api/v1/capabilities", None, None))
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let data = &answer.body["data"];
    let platforms = data["platforms"].as_array().expect("platforms");
    let tiktok = platforms
        .iter()
        .find(|p| p["id"] == "tiktok")
        .expect("the loaded platform is listed");
    assert_eq!(tiktok["enabled"], true);
    assert_eq!(tiktok["extractorVersion"], "1.0.0");
    for p in platforms {
        let id = p["id"].as_str().expect("id");
        assert!(p["credits"].as_i64().is_some_and(|c| c > 0), "{p}");
        assert_eq!(data["billing"]["prices"][id], p["credits"], "{id}");
    }
}

#[tokio::test]
async fn the_operator_token_extractor_guards_the_admin_api() {
    let off = harness(None);
    let answer = off
        .send(request(
            Method::GET,
            "/api/v1/admin/keys",
            Some(OPERATOR),
            None,
        ))
        .await;
    answer.assert_error(404, "not_found");

    let h = harness(Some(OPERATOR));
    let customer = h.key(None, 0);
    for path in ["/api/v1/admin/keys", "/api/v1/admin/extractors"] {
        h.send(request(Method::GET, path, None, None))
            .await
            .assert_error(401, "missing_token");
        h.send(request(Method::GET, path, Some(&customer), None))
            .await
            .assert_error(401, "invalid_token");
        let ok = h
            .send(request(Method::GET, path, Some(OPERATOR), None))
            .await;
        assert_eq!(ok.status, StatusCode::OK, "{path}: {}", ok.body);
    }
    // The guard runs before the body is read.
    h.send(request(
        Method::POST,
        "/api/v1/admin/accounts",
        None,
        Some("not json"),
    ))
    .await
    .assert_error(401, "missing_token");
    let created = h
        .send(request(
            Method::POST,
            "/api/v1/admin/accounts",
            Some(OPERATOR),
            Some(r#"{"id":"globex"}"#),
        ))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    h.send(request(
        Method::POST,
        "/api/v1/admin/accounts",
        Some(OPERATOR),
        Some(r#"{"id":"globex"}"#),
    ))
    .await
    .assert_error(409, "account_exists");
    h.send(request(
        Method::GET,
        "/api/v1/admin/keys/key_nope",
        Some(OPERATOR),
        None,
    ))
    .await
    .assert_error(404, "key_not_found");
}

#[tokio::test]
async fn account_view_shows_the_balance_of_the_key_holder() {
    let h = harness(None);
    let token = h.key(None, 25);
    let answer = h
        .send(request(Method::GET, "/api/v1/account", Some(&token), None))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.credits.as_deref(), Some("0"));
    assert_eq!(answer.body["data"]["balance"], 25);
    assert_eq!(answer.body["data"]["key"]["status"], "active");
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_the_envelope() {
    let h = harness(None);
    h.send(request(Method::GET, "/nope", None, None))
        .await
        .assert_error(404, "not_found");
    h.send(request(Method::GET, "/api/v1/parse", None, None))
        .await
        .assert_error(405, "method_not_allowed");
    let health = h.send(request(Method::GET, "/healthz", None, None)).await;
    assert_eq!(health.body, json!({"status": "ok", "extractors": 0}));
}

#[tokio::test]
async fn rate_limited_keys_get_429_with_retry_after() {
    let h = harness(None);
    let issued = operator::create_key(
        &h.store,
        KeySpec {
            name: "slow".into(),
            account: "acme".into(),
            expires_on: None,
            platforms: None,
            rate_limit_per_minute: Some(1),
        },
        NOW_S,
    )
    .expect("key");
    let body = r#"{"url":"https://example.org/x"}"#;
    h.send(parse(Some(&issued.token), body))
        .await
        .assert_error(400, "302");
    let limited = h.send(parse(Some(&issued.token), body)).await;
    limited.assert_error(429, "rate_limited");
    assert!(limited.retry_after);
    assert_eq!(limited.credits.as_deref(), Some("0"));
}

#[tokio::test]
async fn a_parse_without_media_is_200_code_304_at_no_cost() {
    let h = harness_with(None, test_guest_registry());
    let token = h.key(None, 5);
    let answer = h
        .send(parse(
            Some(&token),
            r#"{"url":"https://tiktok.mptest.example/empty"}"#,
        ))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.body["code"], "304");
    assert_eq!(answer.body["data"], Value::Null);
    assert_eq!(answer.credits.as_deref(), Some("0"));
    assert_eq!(h.store.balance("acme").expect("balance"), 5);
}

/// SPEC.md's two other refusals of its "Known errors" table: a key not
/// allowed the platform detected from the URL (`403 platform_not_allowed`)
/// and an account without the credits a successful parse costs (`402
/// insufficient_credits`); both at no cost.
#[tokio::test]
async fn a_platform_not_allowed_is_403_and_an_empty_balance_is_402() {
    let h = harness_with(None, test_guest_registry());
    let youtube_only = operator::create_key(
        &h.store,
        KeySpec {
            name: "youtube only".into(),
            account: "acme".into(),
            expires_on: None,
            platforms: Some(vec!["youtube".into()]),
            rate_limit_per_minute: None,
        },
        NOW_S - 86_400,
    )
    .expect("key");
    h.store.add_credits("acme", 10, NOW_S).expect("credits");
    let ok = r#"{"url":"https://tiktok.mptest.example/ok"}"#;
    let answer = h.send(parse(Some(&youtube_only.token), ok)).await;
    answer.assert_error(403, "platform_not_allowed");
    assert_eq!(answer.credits.as_deref(), Some("0"));

    let broke = harness_with(None, test_guest_registry());
    let token = broke.key(None, 0);
    let answer = broke.send(parse(Some(&token), ok)).await;
    answer.assert_error(402, "insufficient_credits");
    assert_eq!(answer.credits.as_deref(), Some("0"));
    assert_eq!(broke.store.ledger_count(None).expect("ledger"), 0);
}
