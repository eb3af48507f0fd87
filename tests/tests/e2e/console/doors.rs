//! The doors' locks, black-box against the real binary: password hashing
//! behind the cheap checks and on a bounded pool, sign-in and admin
//! throttles per client address (behind a trusted proxy, IPv6 per /64),
//! repeated `401`s throttled, the operator token's rules, `/metrics` behind
//! it, keys per account bounded, and the console's page headers and cookies.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use super::support::{Browser, between, invite};
use crate::accounts::support::{self, ADMIN, admin, create_key, parse};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The proxy every test request comes through: loopback, trusted when the
/// service is started with `--trusted-proxy 127.0.0.1/32`.
const TRUST_LOOPBACK: (&str, &str) = ("MEDIAPARSE_TRUSTED_PROXIES", "127.0.0.1/32");

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// The p50 and p99 of `samples`.
fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    assert!(!samples.is_empty());
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.50), at(0.99))
}

/// Time `/healthz` and a parse, alternately, until `until`.
async fn measure(
    service: &mediaparse_tests::service::Service,
    token: &str,
    url: &str,
    until: Instant,
    min_samples: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let http = reqwest::Client::new();
    let (mut health, mut parses) = (Vec::new(), Vec::new());
    while Instant::now() < until || health.len() < min_samples {
        let started = Instant::now();
        let ok = http.get(service.url("/healthz")).send().await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK);
        health.push(started.elapsed());
        let started = Instant::now();
        let parsed = parse(service, Some(token), url).await;
        assert_eq!(parsed.status, 200, "{}", parsed.body);
        parses.push(started.elapsed());
    }
    (health, parses)
}

/// 48 anonymous clients posting 16-character passwords to a bogus
/// invitation link (with a self-made form cookie, which anyone can make)
/// leave `/healthz` and a parse about as fast as without them: the link is
/// looked up before any hash. The bound is 100 ms p99 or three times the
/// baseline p99 measured just before in this test, whichever is larger (a
/// loaded machine makes the baseline itself slow).
#[tokio::test]
async fn an_anonymous_invite_flood_does_not_stall_the_service() {
    let env = support::start(&[]).await;
    let service = &env.service;
    service.add_credits("default", 100_000).unwrap();
    let (_, token) = create_key(service, "default", &["--rate-limit", "off"]);
    let url = support::tiktok_urls()[0].clone();
    // Warm up (first parse compiles and caches).
    measure(service, &token, &url, Instant::now(), 5).await;
    let (mut health, mut parses) = measure(
        service,
        &token,
        &url,
        Instant::now() + Duration::from_secs(2),
        20,
    )
    .await;
    let (health_p50, health_p99) = percentiles(&mut health);
    let (parse_p50, parse_p99) = percentiles(&mut parses);
    eprintln!(
        "baseline: healthz p50 {health_p50:?} p99 {health_p99:?}; parse p50 {parse_p50:?} p99 {parse_p99:?}"
    );

    let stop = Instant::now() + Duration::from_secs(4);
    let mut flooders = Vec::new();
    for i in 0..48 {
        let target = service.url(&format!("/console/invite/bogus-secret-{i}"));
        flooders.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut answers = Vec::new();
            while Instant::now() < stop {
                let answer = http
                    .post(&target)
                    .header("cookie", "mp_form=self-made")
                    .form(&[("csrf", "self-made"), ("password", "sixteen-chars-pw")])
                    .send()
                    .await
                    .unwrap();
                answers.push(answer.status());
            }
            answers
        }));
    }
    // Let the flood build up, then measure under it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (mut health, mut parses) = measure(service, &token, &url, stop, 20).await;
    let mut flood = Vec::new();
    for f in flooders {
        flood.extend(f.await.unwrap());
    }
    let (flood_health_p50, flood_health_p99) = percentiles(&mut health);
    let (flood_parse_p50, flood_parse_p99) = percentiles(&mut parses);
    eprintln!(
        "under the flood ({} answers): healthz p50 {flood_health_p50:?} p99 {flood_health_p99:?}; parse p50 {flood_parse_p50:?} p99 {flood_parse_p99:?}",
        flood.len()
    );
    assert!(
        flood.iter().all(|s| *s == StatusCode::NOT_FOUND),
        "a bogus link is not found, before any hash"
    );
    // A stall is seconds of waiting; the floor leaves room for the rest of
    // the suite running beside this test on two cores (seen: 131 ms).
    let bound = |baseline: Duration| (baseline * 3).max(Duration::from_millis(500));
    assert!(
        flood_health_p99 <= bound(health_p99),
        "healthz p99 {flood_health_p99:?} under the flood, {health_p99:?} before"
    );
    assert!(
        flood_parse_p99 <= bound(parse_p99),
        "parse p99 {flood_parse_p99:?} under the flood, {parse_p99:?} before"
    );
}

/// With one hashing slot, concurrent acceptances of one valid link: the
/// slot's holder signs in, the others are told `503` with `Retry-After`
/// (or, once the link is used, that it is gone), never queued.
#[tokio::test]
async fn hashes_beyond_the_pool_answer_503_with_retry_after() {
    let env = support::start(&[("MEDIAPARSE_PASSWORD_HASHES", "1")]).await;
    let service = &env.service;
    let link = invite(service, "acme", "ann@example.com").await;
    let mut tries = Vec::new();
    for _ in 0..16 {
        let target = link.clone();
        tries.push(tokio::spawn(async move {
            let answer = client()
                .post(&target)
                .header("cookie", "mp_form=self-made")
                .form(&[
                    ("csrf", "self-made"),
                    ("password", "a long enough password"),
                ])
                .send()
                .await
                .unwrap();
            let retry_after = answer.headers().get("retry-after").cloned();
            (answer.status(), retry_after)
        }));
    }
    let mut answers = Vec::new();
    for t in tries {
        answers.push(t.await.unwrap());
    }
    let signed_in = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::SEE_OTHER)
        .count();
    let busy: Vec<_> = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert_eq!(signed_in, 1, "{answers:?}");
    assert!(!busy.is_empty(), "{answers:?}");
    assert!(busy.iter().all(|(_, r)| r.is_some()), "{answers:?}");
    assert!(
        answers.iter().all(|(s, _)| [
            StatusCode::SEE_OTHER,
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::NOT_FOUND
        ]
        .contains(s)),
        "{answers:?}"
    );
}

/// A sign-in form post from `address` (as the trusted proxy says).
async fn sign_in_from(
    service: &mediaparse_tests::service::Service,
    address: &str,
    email: &str,
    password: &str,
) -> StatusCode {
    client()
        .post(service.url("/console/sign-in"))
        .header("x-forwarded-for", address)
        .header("cookie", "mp_form=self-made")
        .form(&[
            ("csrf", "self-made"),
            ("email", email),
            ("password", password),
        ])
        .send()
        .await
        .unwrap()
        .status()
}

async fn operator_sign_in_from(
    service: &mediaparse_tests::service::Service,
    address: &str,
    token: &str,
) -> StatusCode {
    client()
        .post(service.url("/console/admin/sign-in"))
        .header("forwarded", format!("for=\"[{address}]\""))
        .header("cookie", "mp_form=self-made")
        .form(&[("csrf", "self-made"), ("token", token)])
        .send()
        .await
        .unwrap()
        .status()
}

/// Behind a trusted proxy the forwarded client address is what is
/// counted: a flooding address is refused without spending the victim's
/// e-mail allowance, and the operator sign-in has one bucket per address
/// (IPv6 per /64), not one for the world.
#[tokio::test]
async fn sign_in_throttles_count_the_forwarded_client() {
    let env = support::start(&[TRUST_LOOPBACK]).await;
    let service = &env.service;
    let link = invite(service, "acme", "vic@example.com").await;
    Browser::new(service)
        .set_password(&link, "vic's long password")
        .await;

    let flooder = "203.0.113.9";
    for i in 0..20 {
        let status = sign_in_from(
            service,
            flooder,
            &format!("u{i}@example.com"),
            "guess guess",
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    for _ in 0..10 {
        let status = sign_in_from(service, flooder, "vic@example.com", "guess guess").await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    }
    // The victim, from her own address: her allowance is whole.
    assert_eq!(
        sign_in_from(
            service,
            "198.51.100.1",
            "vic@example.com",
            "vic's long password"
        )
        .await,
        StatusCode::SEE_OTHER
    );

    // Operator sign-in: ten wrong tokens from one /64, then refused there...
    for i in 0..10 {
        let status = operator_sign_in_from(service, &format!("2001:db8:1:2::{i}"), "wrong").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        operator_sign_in_from(service, "2001:db8:1:2:ffff::1", ADMIN).await,
        StatusCode::TOO_MANY_REQUESTS,
        "the same /64"
    );
    // ...while the operator, elsewhere, signs in.
    assert_eq!(
        operator_sign_in_from(service, "2001:db8:9::1", ADMIN).await,
        StatusCode::SEE_OTHER
    );
}

/// Unknown tokens: thirty `401`s from one address, then `429
/// auth_throttled` with `Retry-After` there, even for a good token; other
/// addresses are not affected. Wrong operator tokens likewise (ten).
#[tokio::test]
async fn repeated_401s_are_throttled_per_address() {
    let env = support::start(&[TRUST_LOOPBACK]).await;
    let service = &env.service;
    service.add_credits("default", 10).unwrap();
    let (_, token) = create_key(service, "default", &[]);
    let account = |address: &'static str, token: String| {
        support::send(
            reqwest::Client::new()
                .get(service.url("/api/v1/account"))
                .header("x-forwarded-for", address)
                .bearer_auth(token),
        )
    };
    for i in 0..30 {
        account("192.0.2.1", format!("mp_live_bogus{i}"))
            .await
            .assert_error(401, "invalid_token");
    }
    let throttled = account("192.0.2.1", token.clone()).await;
    throttled.assert_error(429, "auth_throttled");
    assert!(throttled.headers.contains_key("retry-after"));
    assert_eq!(account("192.0.2.2", token.clone()).await.status, 200);

    let admin_from = |address: &'static str, token: &'static str| {
        support::send(
            reqwest::Client::new()
                .get(service.url("/api/v1/admin/accounts"))
                .header("x-forwarded-for", address)
                .bearer_auth(token),
        )
    };
    for _ in 0..10 {
        admin_from("192.0.2.7", "not-the-operator-token")
            .await
            .assert_error(401, "invalid_token");
    }
    admin_from("192.0.2.7", ADMIN)
        .await
        .assert_error(429, "auth_throttled");
    assert_eq!(admin_from("192.0.2.8", ADMIN).await.status, 200);
}

/// The operator token must be 32 bytes or more (the service refuses to
/// start otherwise, saying why); it is trimmed; `/metrics` is behind it.
#[tokio::test]
async fn the_operator_token_is_long_trimmed_and_guards_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let refused = tokio::process::Command::new(mediaparse_tests::paths::host_binary())
        .arg("--db")
        .arg(dir.path().join("m.db"))
        .args(["serve", "--listen", "127.0.0.1:0", "--test-mode"])
        .env("MEDIAPARSE_ADMIN_TOKEN", "short-token")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(Duration::from_secs(60), refused.wait_with_output())
        .await
        .expect("serve with a short operator token is still running: not refused")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("at least 32"), "{stderr}");

    let upstream = mediaparse_tests::fake_upstream::FakeUpstream::start(&support::tiktok_cases())
        .await
        .unwrap();
    let extractors = support::tiktok_only();
    let service =
        mediaparse_tests::service::Service::start(mediaparse_tests::service::ServiceOptions {
            upstream: Some(upstream.base_url()),
            extractors: Some(extractors.clone()),
            admin_token: Some(format!("  {ADMIN}\n")),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        admin(
            &service,
            reqwest::Method::GET,
            "/api/v1/admin/accounts",
            None
        )
        .await
        .status,
        200,
        "the trimmed token opens the admin API"
    );
    let metrics = |token: Option<&'static str>| {
        let mut req = reqwest::Client::new().get(service.url("/metrics"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    assert_eq!(metrics(None).await.unwrap().status(), 401);
    let with_token = metrics(Some(ADMIN)).await.unwrap();
    assert_eq!(with_token.status(), 200);
    assert!(with_token.text().await.unwrap().contains("mediaparse_"));

    // `--metrics-listen`: there without a token, not on the main address.
    let port = free_port();
    let separate =
        mediaparse_tests::service::Service::start(mediaparse_tests::service::ServiceOptions {
            upstream: Some(upstream.base_url()),
            extractors: Some(extractors),
            admin_token: Some(ADMIN.into()),
            extra_args: vec!["--metrics-listen".into(), format!("127.0.0.1:{port}")],
            ..Default::default()
        })
        .await
        .unwrap();
    let main = reqwest::Client::new()
        .get(separate.url("/metrics"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(main.status(), 404);
    let own = reqwest::get(format!("http://127.0.0.1:{port}/metrics"))
        .await
        .unwrap();
    assert_eq!(own.status(), 200);
    assert!(own.text().await.unwrap().contains("mediaparse_"));
}

/// An operator console session ends when the service restarts with another
/// operator token.
#[tokio::test]
async fn operator_sessions_end_when_the_token_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mediaparse.db");
    let extractors = support::tiktok_only();
    let start = |token: &'static str| {
        mediaparse_tests::service::Service::start(mediaparse_tests::service::ServiceOptions {
            db: Some(db.clone()),
            extractors: Some(extractors.clone()),
            admin_token: Some(token.into()),
            ..Default::default()
        })
    };
    let first = start(ADMIN).await.unwrap();
    let mut op = Browser::new(&first);
    let page = op.get("/console/admin/sign-in").await.1;
    let csrf = between(&page, "name=\"csrf\" value=\"", "\"");
    let signed = op
        .post_raw(
            "/console/admin/sign-in",
            &[("token", ADMIN), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(signed.0, StatusCode::SEE_OTHER);
    assert_eq!(op.get("/console/admin").await.0, StatusCode::OK);
    let cookies = op.cookie_header();
    drop(first);

    let second = start("a-new-operator-token-of-at-least-32-bytes")
        .await
        .unwrap();
    let answer = client()
        .get(second.url("/console/admin"))
        .header("cookie", cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::SEE_OTHER, "signed out");
    assert_eq!(
        answer.headers()["location"],
        "/console/admin/sign-in",
        "to the operator sign-in"
    );
}

/// `--max-keys-per-account 3`: the fourth key of an account is refused on
/// every path — admin API (`409 key_limit_reached`), console (409), CLI.
#[tokio::test]
async fn keys_per_account_are_bounded_on_every_path() {
    let env = support::start(&[("MEDIAPARSE_MAX_KEYS_PER_ACCOUNT", "3")]).await;
    let service = &env.service;
    for i in 0..3 {
        let made = admin(
            service,
            reqwest::Method::POST,
            "/api/v1/admin/keys",
            Some(json!({"name": format!("k{i}"), "account": "acme"})),
        )
        .await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    admin(
        service,
        reqwest::Method::POST,
        "/api/v1/admin/keys",
        Some(json!({"name": "k3", "account": "acme"})),
    )
    .await
    .assert_error(409, "key_limit_reached");
    // Another account is not affected.
    let other = admin(
        service,
        reqwest::Method::POST,
        "/api/v1/admin/keys",
        Some(json!({"name": "k0", "account": "beta"})),
    )
    .await;
    assert_eq!(other.status, 201);

    // The console: a user of the full account.
    let link = invite(service, "acme", "ann@example.com").await;
    let mut ann = Browser::new(service);
    ann.set_password(&link, "a long enough password").await;
    let refused = ann
        .post("/console/keys", &[("name", "more"), ("scope", "all")])
        .await;
    assert_eq!(refused.0, StatusCode::CONFLICT, "{}", refused.1);
    assert!(refused.1.contains("the most it may have"), "{}", refused.1);

    // The CLI (its bound from `--max-keys-per-account` or the environment).
    let (code, out) = service
        .cli(&[
            "keys",
            "create",
            "--name",
            "cli",
            "--account",
            "acme",
            "--max-keys-per-account",
            "3",
        ])
        .unwrap();
    assert_ne!(code, 0, "{out}");
    let count = support::cli_json(service, &["keys", "list", "--account", "acme"]);
    assert_eq!(count.as_array().unwrap().len(), 3);
}

/// Console and docs pages: CSP (no framing), `X-Frame-Options: DENY`,
/// `nosniff`; behind an https public base URL the cookies are `__Host-`,
/// `Secure`, `Path=/`, and the console works with them.
#[tokio::test]
async fn pages_send_security_headers_and_https_cookies_are_host_prefixed() {
    let env = support::start(&[("MEDIAPARSE_PUBLIC_BASE_URL", "https://mp.example")]).await;
    let service = &env.service;
    for path in ["/console/sign-in", "/docs/"] {
        let page = reqwest::get(service.url(path)).await.unwrap();
        assert_eq!(page.status(), 200, "{path}");
        let h = page.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert_eq!(h["x-frame-options"], "DENY", "{path}");
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
    }
    let link = invite(service, "acme", "ann@example.com").await;
    let path = link.trim_start_matches("https://mp.example");
    let mut ann = Browser::new(service);
    let (status, page) = ann.get(path).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let csrf = between(&page, "name=\"csrf\" value=\"", "\"");
    let cookies = ann.cookie_header();
    assert!(cookies.starts_with("__Host-mp_form="), "{cookies}");
    let answer = client()
        .post(service.url(path))
        .header("cookie", cookies)
        .form(&[("password", "a long enough password"), ("csrf", &csrf)])
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let set = answer.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(set.starts_with("__Host-mp_session="), "{set}");
    assert!(set.contains("; Secure") && set.contains("Path=/;"), "{set}");
    let session = set.split(';').next().unwrap().to_string();
    let overview = client()
        .get(service.url("/console"))
        .header("cookie", session)
        .send()
        .await
        .unwrap();
    assert_eq!(overview.status(), StatusCode::OK);
}
