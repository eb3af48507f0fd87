//! The robustness suite: load, upstream faults and bad input,
//! against the real binary and the real components. Bounded in time: the
//! load is a fixed number of requests, the faults use a 400 ms upstream
//! timeout, and the property tests run `PROPTEST_CASES` cases (default 128
//! per property; run thousands locally, see README "Robustness suite").

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mediaparse::registry::{Registry, Runtime, SandboxLimits};
use mediaparse_sdk::fixture::{Case, DEFAULT_NOW_MS};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::faults::{Fault, FaultyUpstream};
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

const CREDITS: i64 = 1_000_000_000;

fn all_cases() -> Vec<(String, Case)> {
    let mut out = Vec::new();
    for (platform, dir) in paths::fixture_dirs() {
        for case in Case::load_all(&dir).expect("fixtures load") {
            out.push((platform.clone(), case));
        }
    }
    out
}

fn cases_per_property() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

/// Every answer is the documented envelope: `status` equal to the HTTP
/// status and a `msg`; an error (and the 200 without media) carries a `code`
/// and `data: null`. Returns the code (`""` for a success with media).
fn check_envelope(status: u16, body: &Value) -> Result<String, String> {
    if body["status"] != json!(status) || !body["msg"].is_string() {
        return Err(format!("not an envelope for HTTP {status}: {body}"));
    }
    if status == 200 && !body["data"].is_null() {
        return Ok(String::new());
    }
    let code = body["code"]
        .as_str()
        .ok_or_else(|| format!("no code in {body}"))?;
    if !body["data"].is_null() {
        return Err(format!("an error with data: {body}"));
    }
    Ok(code.to_string())
}

// ------------------------------------------------------------------ load

/// 64 clients at once, a fixed number of parses across several platforms:
/// every answer is the expected one (no 5xx), and the ledger holds exactly
/// what the responses announced.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_across_platforms() {
    let cases: Vec<(String, Case)> = all_cases();
    let upstream = FakeUpstream::start(&cases.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
    // Successful cases that need no operator config and use the default clock,
    // at most three per platform.
    let mut per_platform: BTreeMap<String, usize> = BTreeMap::new();
    let chosen: Vec<(String, String)> = cases
        .iter()
        .filter(|(_, c)| {
            c.config.is_empty()
                && c.now_unix_ms.is_none_or(|n| n == DEFAULT_NOW_MS)
                && c.expect.media.as_ref().is_some_and(|m| {
                    ["images", "videos", "audios"]
                        .iter()
                        .any(|k| m[k].as_array().is_some_and(|a| !a.is_empty()))
                })
        })
        .filter(|(p, _)| {
            let n = per_platform.entry(p.clone()).or_default();
            *n += 1;
            *n <= 3
        })
        .map(|(p, c)| (p.clone(), c.input.clone()))
        .collect();
    let platforms: std::collections::BTreeSet<&str> =
        chosen.iter().map(|(p, _)| p.as_str()).collect();
    assert!(platforms.len() >= 5, "too few platforms: {platforms:?}");

    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", CREDITS).unwrap();
    let token = Arc::new(service.create_key(&["--rate-limit", "off"]).unwrap());
    let client = reqwest::Client::new();
    let url = Arc::new(service.url("/api/v1/parse"));
    let chosen = Arc::new(chosen);
    // The bundled prices (each platform.toml's).
    let prices = Arc::new(paths::bundled_catalogue());
    const CLIENTS: usize = 64;
    const PER_CLIENT: usize = 8;
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let (client, url, token, chosen, prices) = (
            client.clone(),
            url.clone(),
            token.clone(),
            chosen.clone(),
            prices.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut charged = 0i64;
            let mut problems = Vec::new();
            for i in 0..PER_CLIENT {
                let (platform, input) = &chosen[(c * PER_CLIENT + i) % chosen.len()];
                let resp = client
                    .post(url.as_str())
                    .bearer_auth(token.as_str())
                    .json(&json!({ "url": input }))
                    .send()
                    .await
                    .unwrap();
                let status = resp.status().as_u16();
                let credits: i64 = resp
                    .headers()
                    .get("x-credits-charged")
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .unwrap_or(-1);
                let body: Value = resp.json().await.unwrap_or(Value::Null);
                let price = prices.get(platform).map_or(-1, |m| m.price);
                if status != 200 || credits != price {
                    problems.push(format!(
                        "{platform} {input}: {status} charged {credits}: {body}"
                    ));
                } else {
                    charged += credits;
                }
            }
            (charged, problems)
        }));
    }
    let mut announced = 0;
    let mut problems = Vec::new();
    for t in tasks {
        let (c, p) = t.await.unwrap();
        announced += c;
        problems.extend(p);
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.ledger_sum(None).unwrap(), announced);
    assert_eq!(store.balance("default").unwrap(), CREDITS - announced);
    assert!(announced > 0);
}

// ------------------------------------------------------------------ upstream faults

/// Each upstream fault gives its documented envelope, charges nothing and
/// leaves the service up.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn upstream_faults_give_their_envelope_and_no_credit() {
    const LIMIT: usize = 256 * 1024;
    // (needle in the upstream URL, fault, expected status, expected code).
    // TikTok post pages are fetched without following redirects (the
    // extractor reads each hop itself); YouTube's player API is fetched with
    // the host following them, so the host's own redirect limit is what a
    // loop there meets.
    let table: Vec<(&str, Fault, u16, &str)> = vec![
        (
            "7000000000000000001",
            Fault::Slow(Duration::from_secs(3)),
            504,
            "upstream_timeout",
        ),
        ("7000000000000000002", Fault::Reset, 502, "upstream_error"),
        (
            "7000000000000000003",
            Fault::Status(500),
            502,
            "upstream_error",
        ),
        (
            "7000000000000000004",
            Fault::Status(503),
            502,
            "upstream_error",
        ),
        (
            "7000000000000000005",
            Fault::Truncated,
            502,
            "upstream_error",
        ),
        ("7000000000000000006", Fault::Garbage, 502, "upstream_error"),
        (
            "7000000000000000007",
            Fault::Oversize(4 * LIMIT),
            502,
            "upstream_error",
        ),
        (
            "7000000000000000008",
            Fault::RedirectLoop,
            404,
            "content_unavailable",
        ),
        ("Lp00000loop", Fault::RedirectLoop, 502, "upstream_error"),
        (
            "Sl00000slow",
            Fault::Slow(Duration::from_secs(3)),
            504,
            "upstream_timeout",
        ),
        ("Rs0000reset", Fault::Reset, 502, "upstream_error"),
        ("Gb00garbage", Fault::Garbage, 502, "upstream_error"),
    ];
    let upstream = FaultyUpstream::start(
        table
            .iter()
            .map(|(id, f, _, _)| (id.to_string(), f.clone()))
            .collect(),
    )
    .await
    .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        extra_env: vec![
            ("MEDIAPARSE_UPSTREAM_TIMEOUT_MS".into(), "400".into()),
            (
                "MEDIAPARSE_UPSTREAM_MAX_BODY_BYTES".into(),
                LIMIT.to_string(),
            ),
        ],
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1000).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let client = reqwest::Client::new();
    // All at once: the slow fault must not serialise the rest.
    let mut tasks = Vec::new();
    for (id, _, _, _) in &table {
        let req = client
            .post(service.url("/api/v1/parse"))
            .bearer_auth(&token)
            .json(&json!({ "url": input_for(id) }));
        tasks.push(tokio::spawn(async move {
            let resp = req.send().await.unwrap();
            let status = resp.status().as_u16();
            let charged = resp
                .headers()
                .get("x-credits-charged")
                .and_then(|v| v.to_str().ok().map(String::from));
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            (status, charged, body)
        }));
    }
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    let mut problems = Vec::new();
    for ((id, fault, want_status, want_code), (status, charged, body)) in table.iter().zip(answers)
    {
        let code = check_envelope(status, &body);
        if status != *want_status || code.as_deref() != Ok(*want_code) {
            problems.push(format!(
                "{fault:?} ({id}): expected {want_status} {want_code}, got {status} {body}"
            ));
        }
        if charged.as_deref() != Some("0") {
            problems.push(format!("{fault:?}: X-Credits-Charged {charged:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nupstream saw: {:?}",
        problems.join("\n"),
        upstream.seen()
    );
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.ledger_sum(None).unwrap(), 0);
    assert_eq!(store.balance("default").unwrap(), 1000);
    let health = client.get(service.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "the service is still up");
}

/// A TikTok post for a numeric id, a YouTube video for an 11-character one.
fn input_for(needle: &str) -> String {
    if needle.len() == 11 {
        format!("https://www.youtube.com/watch?v={needle}")
    } else {
        format!("https://www.tiktok.com/@fault/video/{needle}")
    }
}

// ------------------------------------------------------------------ bad input: bodies

/// Mutate a string: insert, delete or replace characters at random places.
fn mutated(inputs: Vec<String>) -> impl Strategy<Value = String> {
    (
        prop::sample::select(inputs),
        prop::collection::vec((0u8..3, any::<usize>(), any::<char>()), 0..6),
    )
        .prop_map(|(s, ops)| {
            let mut chars: Vec<char> = s.chars().collect();
            for (op, pos, c) in ops {
                let at = pos % (chars.len() + 1);
                match op {
                    0 => chars.insert(at, c),
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    _ if at < chars.len() => chars[at] = c,
                    _ => chars.push(c),
                }
            }
            chars.into_iter().collect()
        })
}

fn input_strategy(real: Vec<String>) -> BoxedStrategy<String> {
    prop_oneof![
        4 => mutated(real.clone()),
        2 => prop::sample::select(real),
        2 => any::<String>(),
        1 => "[ -~]{0,120}",
        1 => (any::<char>(), 1000usize..20_000).prop_map(|(c, n)| format!("https://www.tiktok.com/@a/video/{}", c.to_string().repeat(n))),
    ]
    .boxed()
}

fn body_strategy(real: Vec<String>) -> impl Strategy<Value = Vec<u8>> {
    let input = input_strategy(real);
    prop_oneof![
        4 => input.clone().prop_map(|u| json!({ "url": u }).to_string().into_bytes()),
        1 => input.clone().prop_map(|u| json!({ "link": u }).to_string().into_bytes()),
        1 => (input.clone(), input.clone()).prop_map(|(a, b)| json!({ "url": a, "link": b }).to_string().into_bytes()),
        // invalid UTF-8 through JSON escapes (lone surrogates)
        1 => (input.clone(), prop::sample::select(vec!["\\ud800", "\\udfff", "\\ud83d\\u0041", "\\uDC00\\uD800"]))
            .prop_map(|(u, esc)| {
                let quoted = Value::String(u).to_string();
                format!("{{\"url\":{}{esc}\"}}", &quoted[..quoted.len() - 1]).into_bytes()
            }),
        // deeply nested JSON, alone or as the url's value
        1 => (1usize..20_000, any::<bool>()).prop_map(|(d, wrap)| {
            let nested = format!("{}{}", "[".repeat(d), "]".repeat(d));
            if wrap { format!("{{\"url\":{nested}}}") } else { nested }.into_bytes()
        }),
        // wrong types
        1 => prop::sample::select(vec![
            "null", "[]", "true", "12", "\"https://www.tiktok.com/@a/video/1\"", "{}",
            "{\"url\":1}", "{\"url\":null}", "{\"url\":[\"https://x\"]}", "{\"url\":{\"a\":1}}",
            "{\"link\":false}", "{\"url\":\"\"}", "{\"url\":\"https://www.tiktok.com/@a/video/1\",\"extra\":1}",
            "{\"url\":1e999999}", "{\"url\":-0}",
        ]).prop_map(|s| s.as_bytes().to_vec()),
        // not JSON at all, invalid UTF-8 included
        1 => prop::collection::vec(any::<u8>(), 0..600),
    ]
}

/// The service's request body cap (64 KiB).
const OVER_BODY_CAP: usize = 64 * 1024;

const DOCUMENTED: &[u16] = &[200, 400, 402, 403, 404, 413, 415, 422, 502, 503, 504];

/// Random and mutated request bodies, on both endpoints: never a panic, a
/// 500 or an undocumented status; always the envelope.
#[test]
fn request_bodies_never_panic_or_500() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let cases = all_cases();
    let real: Vec<String> = cases.iter().map(|(_, c)| c.input.clone()).collect();
    let (upstream, service, token) = rt.block_on(async {
        let upstream =
            FakeUpstream::start(&cases.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>())
                .await
                .unwrap();
        let service = Service::start(ServiceOptions {
            upstream: Some(upstream.base_url()),
            ..Default::default()
        })
        .await
        .unwrap();
        service.add_credits("default", CREDITS).unwrap();
        let token = service.create_key(&["--rate-limit", "off"]).unwrap();
        // Every bundled component loaded, or every parse would be a quick
        // 503 extractor_unavailable and prove nothing about them.
        let health: Value = reqwest::get(service.url("/healthz"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            health["extractors"],
            paths::bundled_catalogue().ids().len(),
            "{health}"
        );
        (upstream, service, token)
    });
    // A fresh connection per case: a body the service refuses early (413)
    // ends its connection, and a pooled client could race that close.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut segments: Vec<String> = paths::bundled_catalogue()
        .ids()
        .into_iter()
        .map(String::from)
        .collect();
    segments.extend(["TikTok", "nope", "%2e%2e", "x%00y"].map(String::from));
    let strategy = (
        body_strategy(real),
        prop::option::weighted(0.3, prop::sample::select(segments)),
        prop::sample::select(vec![
            Some("application/json"),
            Some("application/json; charset=utf-8"),
            Some("text/plain"),
            None,
        ]),
    );
    let mut runner = TestRunner::new(Config {
        cases: cases_per_property(),
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&strategy, |(body, segment, content_type)| {
        let path = match &segment {
            Some(p) => format!("/api/v1/platforms/{p}/parse"),
            None => "/api/v1/parse".to_string(),
        };
        let answer = rt
            .block_on(async {
                let mut req = client
                    .post(service.url(&path))
                    .bearer_auth(&token)
                    .body(body.clone());
                if let Some(ct) = content_type {
                    req = req.header("content-type", ct);
                }
                let answer = match req.send().await {
                    Ok(resp) => {
                        let status = resp.status().as_u16();
                        resp.text().await.map(|text| (status, text))
                    }
                    Err(e) => Err(e),
                };
                match answer {
                    Ok(answer) => Ok(Some(answer)),
                    Err(e) => {
                        // Over the body cap the service may answer 413 and close
                        // while the client is still sending: then it must still be up.
                        let up = client
                            .get(service.url("/healthz"))
                            .send()
                            .await
                            .is_ok_and(|r| r.status() == 200);
                        if body.len() > OVER_BODY_CAP && up {
                            Ok(None)
                        } else {
                            Err(format!("{e} (service up: {up})"))
                        }
                    }
                }
            })
            .map_err(|e| TestCaseError::fail(format!("no answer: {e}")))?;
        let Some((status, answer)) = answer else {
            return Ok(());
        };
        let value: Value = serde_json::from_str(&answer)
            .map_err(|_| TestCaseError::fail(format!("{status}: not JSON: {answer}")))?;
        prop_assert!(
            DOCUMENTED.contains(&status),
            "undocumented status {status}: {answer}"
        );
        check_envelope(status, &value).map_err(TestCaseError::fail)?;
        Ok(())
    });
    drop(upstream);
    if let Err(e) = outcome {
        panic!("{e}");
    }
}

// ------------------------------------------------------------------ bad input: detect

/// `detect` of every platform, through the host's runtime and the real
/// components, on random and mutated inputs: a target of its own platform
/// with an id, or an `unsupported` failure; never a trap.
#[test]
fn detect_never_traps_on_any_platform() {
    let registry = Registry::with_cache(
        Runtime::new(SandboxLimits::default()).unwrap(),
        Some(paths::compiled_cache_dir()),
    );
    let loaded = registry.load_dir(&paths::extractors_dir()).unwrap();
    assert!(registry.errors().is_empty(), "{:?}", registry.errors());
    // Every bundled platform's component is here, or the property below
    // would hold over nothing.
    let catalogue = paths::bundled_catalogue();
    let mut expected = catalogue.ids();
    expected.sort();
    let mut present: Vec<String> = registry
        .all()
        .iter()
        .map(|e| e.platform().to_string())
        .collect();
    present.sort();
    assert_eq!(present, expected, "the components loaded");
    assert_eq!(loaded, expected.len());
    let cases = all_cases();
    let mut problems = Vec::new();
    for ext in registry.all() {
        let platform = ext.platform().to_string();
        let mut real: Vec<String> = cases
            .iter()
            .filter(|(p, _)| *p == platform)
            .map(|(_, c)| c.input.clone())
            .collect();
        if real.is_empty() {
            real.push(format!(
                "https://{}/",
                ext.info.url_hosts[0].trim_start_matches("*.")
            ));
        }
        let hosts: Vec<String> = ext
            .info
            .url_hosts
            .iter()
            .map(|h| h.replace("*.", "www."))
            .collect();
        let strategy = prop_oneof![
            4 => mutated(real.clone()),
            2 => (prop::sample::select(hosts), "[ -~]{0,80}").prop_map(|(h, p)| format!("https://{h}/{p}")),
            1 => any::<String>(),
            1 => (prop::sample::select(real), any::<String>()).prop_map(|(u, t)| format!("{t} {u} {t}")),
        ];
        let mut runner = TestRunner::new(Config {
            cases: cases_per_property(),
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |input| {
            // Routing is native host code: it must not panic either.
            let _ = mediaparse::parse::route(&registry, &input, Some(&platform));
            let detected = mediaparse::registry::run_blocking(async {
                registry.session(&ext).await?.detect(&input).await
            });
            match detected {
                Err(e) => Err(TestCaseError::fail(format!("{input:?}: {e}"))),
                Ok(Ok(t)) => {
                    prop_assert_eq!(&t.platform, &platform, "{:?}", input);
                    prop_assert!(!t.id.is_empty(), "{:?}: empty id", input);
                    prop_assert!(
                        t.canonical_url.starts_with("https://")
                            || t.canonical_url.starts_with("http://"),
                        "{:?}: canonical {:?}",
                        input,
                        t.canonical_url
                    );
                    Ok(())
                }
                Ok(Err(f)) => {
                    prop_assert_eq!(f.code(), "302", "{:?}: {}", input, f);
                    Ok(())
                }
            }
        });
        if let Err(e) = result {
            problems.push(format!("{platform}: {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
