//! Every fixture case of every extractor, replayed end to end: the real host
//! binary, the real wasm component, real HTTP to a fake upstream that serves
//! the recorded exchanges. Media must equal the golden JSON, errors must carry
//! their documented status and code, and the ledger must hold exactly the
//! credits the successful responses announced. Cases that need operator
//! config run on a service started with that config.

use mediaparse_sdk::Header;
use mediaparse_sdk::fixture::{Case, DEFAULT_NOW_MS};
use mediaparse_tests::contract;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const ADMIN: &str = "operator-token-of-the-fixture-replay";

/// Platforms whose guests may grow their linear memory past its initial
/// size on an ordinary page: YouTube's embedded JavaScript engine holds a
/// player's program.
const MAY_GROW: &[&str] = &["youtube"];

fn status_for(code: &str) -> u16 {
    match code {
        "302" => 400,
        "content_unavailable" => 404,
        "login_required" => 422,
        "upstream_rate_limited" => 503,
        "upstream_error" => 502,
        other => panic!("fixture expects unknown code {other}"),
    }
}

struct Target {
    platform: String,
    config: Vec<Header>,
    helper_hosts: Vec<String>,
    service: Service,
    token: String,
    charged: i64,
}

async fn start_service(
    upstream: &FakeUpstream,
    dir: &std::path::Path,
    platform: &str,
    config: &[Header],
    helper_hosts: &[String],
) -> Target {
    // Every failure case of a platform replays on one service: its breaker
    // would rightly judge the platform broken and refuse the cases after
    // (off already under the upstream override; said here all the same).
    let mut toml = "[health]\nbreaker = \"off\"\n".to_string();
    if !config.is_empty() || !helper_hosts.is_empty() {
        toml.push_str(&format!(
            "[platforms.{platform}]\nhelper_hosts = {}\n[platforms.{platform}.config]\n",
            Value::from(helper_hosts.to_vec())
        ));
        for h in config {
            toml.push_str(&format!(
                "{} = {}\n",
                Value::String(h.name.clone()),
                Value::String(h.value.clone())
            ));
        }
    }
    // One file per service: the count of those written so far.
    let n = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    let config_file = dir.join(format!("{platform}-{n}.toml"));
    std::fs::write(&config_file, toml).unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        config: Some(config_file),
        admin_token: Some(ADMIN.into()),
        ..Default::default()
    })
    .await
    .expect("service starts");
    service.add_credits("default", 1_000_000).unwrap();
    // Hundreds of parses in a row on one key: no rate limit for this one.
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    Target {
        platform: platform.to_string(),
        config: config.to_vec(),
        helper_hosts: helper_hosts.to_vec(),
        service,
        token,
        charged: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fixture_case_replays_through_the_host() {
    let mut cases: Vec<(String, Case)> = Vec::new();
    let catalogue = paths::bundled_catalogue();
    for (platform, dir) in paths::fixture_dirs() {
        for case in Case::load_all(&dir).expect("fixtures load") {
            cases.push((platform.clone(), case));
        }
    }
    assert!(!cases.is_empty(), "no fixture cases found");
    let all: Vec<Case> = cases.iter().map(|(_, c)| c.clone()).collect();
    let upstream = FakeUpstream::start(&all).await.expect("fake upstream");
    let config_dir = tempfile::tempdir().unwrap();
    let mut targets = vec![start_service(&upstream, config_dir.path(), "", &[], &[]).await];
    let client = reqwest::Client::new();

    let mut failures = Vec::new();
    let mut replayed = 0;
    let mut skipped = Vec::new();
    for (platform, case) in &cases {
        let name = format!("{platform}/{}", case.name());
        // Another clock, or values remembered from earlier parses (a service
        // starts with none): those cases replay through the wasm component
        // in `cases_with_remembered_values_replay_through_the_component`.
        if case.now_unix_ms.is_some_and(|n| n != DEFAULT_NOW_MS) || !case.remembered.is_empty() {
            skipped.push(name);
            continue;
        }
        let index = match targets.iter().position(|t| {
            t.config == case.config
                && t.helper_hosts == case.helper_hosts
                && (case.config.is_empty() && case.helper_hosts.is_empty()
                    || t.platform == *platform)
        }) {
            Some(i) => i,
            None => {
                targets.push(
                    start_service(
                        &upstream,
                        config_dir.path(),
                        platform,
                        &case.config,
                        &case.helper_hosts,
                    )
                    .await,
                );
                targets.len() - 1
            }
        };
        let target = &mut targets[index];
        replayed += 1;
        for endpoint in [
            format!("/api/v1/platforms/{platform}/parse"),
            "/api/v1/parse".to_string(),
        ] {
            let response = client
                .post(target.service.url(&endpoint))
                .bearer_auth(&target.token)
                .json(&json!({"url": case.input}))
                .send()
                .await
                .unwrap();
            // Every response is checked against docs/openapi.json.
            let (status, headers, body) = contract::read("POST", response).await;
            let charged: i64 = headers
                .get("x-credits-charged")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let mut problem = |p: String| {
                failures.push(format!(
                    "{name} {endpoint}: {p}\n    body: {}",
                    truncate(&body)
                ))
            };
            match (&case.expect.error, &case.expect.media) {
                (Some(code), _) => {
                    if status != status_for(code) || body["code"] != *code {
                        problem(format!(
                            "expected {} {code}, got {status} {}",
                            status_for(code),
                            body["code"]
                        ));
                    }
                    if charged != 0 {
                        problem(format!("a failure charged {charged}"));
                    }
                }
                (None, Some(want)) => {
                    let empty = ["images", "videos", "audios"]
                        .iter()
                        .all(|k| want[k].as_array().is_some_and(|a| a.is_empty()));
                    if empty {
                        if status != 200 || body["code"] != "304" || charged != 0 {
                            problem(format!(
                                "expected 200/304 uncharged, got {status} {} charged {charged}",
                                body["code"]
                            ));
                        }
                        continue;
                    }
                    let price = catalogue.get(platform).map_or(-1, |m| m.price);
                    if status != 200 || charged != price {
                        problem(format!(
                            "expected 200 charged {price}, got {status} charged {charged}"
                        ));
                        continue;
                    }
                    target.charged += charged;
                    let platform_endpoint = endpoint.contains("/platforms/");
                    let media = if platform_endpoint {
                        &body["data"]["media"]
                    } else {
                        &body["data"]
                    };
                    for diff in mediaparse_sdk::replay::json_diff("", want, media)
                        .into_iter()
                        .take(10)
                    {
                        problem(format!("media{diff}"));
                    }
                    if platform_endpoint {
                        if body["data"]["platformDataVersion"] != "1" {
                            problem("platformDataVersion is not \"1\"".into());
                        }
                        let data = &body["data"]["platformData"];
                        let manifest = catalogue.get(platform).expect("a bundled platform.toml");
                        for p in manifest.check_platform_data(data) {
                            problem(format!("platformData: {p}"));
                        }
                        for (pointer, want) in case.expect.platform_data.iter().flatten() {
                            if data.pointer(pointer) != Some(want) {
                                problem(format!(
                                    "platformData{pointer}: expected {want}, got {:?}",
                                    data.pointer(pointer)
                                ));
                            }
                        }
                    }
                }
                (None, None) => problem("case expects nothing".into()),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in {replayed} cases:\n{}\nfake upstream misses: {:?}",
        failures.len(),
        failures.join("\n"),
        upstream.misses()
    );
    for t in &targets {
        let store = mediaparse::store::Store::open(&t.service.db).unwrap();
        assert_eq!(
            store.ledger_sum(None).unwrap(),
            t.charged,
            "ledger sum equals the credits the responses announced"
        );
        assert_eq!(store.balance("default").unwrap(), 1_000_000 - t.charged);
    }
    // Guests are linked with a linear memory that holds an ordinary parse:
    // growing it costs the instance pool an mprotect and a TLB shootdown.
    let mut grown = Vec::new();
    for t in &targets {
        let metrics = reqwest::Client::new()
            .get(t.service.url("/metrics"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text");
        for line in metrics.lines() {
            let Some(rest) = line.strip_prefix("mediaparse_guest_memory_grows_total{platform=\"")
            else {
                continue;
            };
            let (platform, count) = rest.split_once("\"} ").expect("a counter line");
            if !MAY_GROW.contains(&platform) && count != "0" {
                grown.push(format!("{platform}: {count}"));
            }
        }
    }
    assert!(
        grown.is_empty(),
        "guests grew their memory past its initial size: {grown:?}"
    );
    eprintln!(
        "replayed {replayed} cases end to end on {} services ({} skipped for another clock or remembered values: {skipped:?}); {} responses valid under docs/openapi.json",
        targets.len(),
        skipped.len(),
        contract::CHECKED.load(std::sync::atomic::Ordering::Relaxed)
    );
}

/// The cases a fresh service cannot replay (values remembered from earlier
/// parses, another clock) run through the real wasm component with the
/// SDK's harness, the context carrying what the case remembers: loading a
/// remembered program in the component is tested here. Each is replayed a
/// second time without its remembered values and must then fail (the
/// component asks for what it would otherwise have remembered), so a
/// component that ignored `context.remembered` could not pass.
#[test]
fn cases_with_remembered_values_replay_through_the_component() {
    use mediaparse::authoring::replay::{ComponentChoice, component_for, replay_loaded};
    let choice = ComponentChoice::Dir(paths::extractors_dir(), Some(paths::compiled_cache_dir()));
    let mut replayed = Vec::new();
    for (platform, dir) in paths::fixture_dirs() {
        for case in Case::load_all(&dir).expect("fixtures load") {
            if case.remembered.is_empty() && case.now_unix_ms.is_none_or(|n| n == DEFAULT_NOW_MS) {
                continue;
            }
            let name = format!("{platform}/{}", case.name());
            let (registry, ext) = component_for(&case, &choice).expect("the component loads");
            let report = replay_loaded(&case, &registry, &ext).expect("the case replays");
            assert!(report.passed, "{name}:\n  {}", report.problems);
            if !case.remembered.is_empty() {
                let forgotten = Case {
                    remembered: Vec::new(),
                    ..case.clone()
                };
                let report = replay_loaded(&forgotten, &registry, &ext).expect("the case replays");
                assert!(
                    !report.passed,
                    "{name} replays the same without its remembered values, so they are never read"
                );
            }
            replayed.push(name);
        }
    }
    // The two YouTube cases that carry a remembered player program.
    assert!(
        replayed
            .iter()
            .filter(|n| n.starts_with("youtube/web_challenges_known_player"))
            .count()
            >= 2,
        "{replayed:?}"
    );
}

fn truncate(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(400) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}
