//! Platforms as data: a platform the host was never built
//! for, dropped into a running service's extractors folder as
//! `<id>.wasm` + `<id>.toml`, is served, listed and priced from its file —
//! no host rebuild, no restart.

use std::path::Path;
use std::time::{Duration, Instant};

use mediaparse_tests::fake_upstream::{FakeUpstream, Route};
use mediaparse_tests::guest;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

const ADMIN: &str = "operator-token-for-dropin-at-least-32-bytes";
const LIMIT: Duration = Duration::from_secs(60);

/// Write `bytes` as `dir/name` the way an operator should: temporary name, rename.
fn drop_file(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).expect("write");
    std::fs::rename(&tmp, dir.join(name)).expect("rename");
}

async fn get(client: &reqwest::Client, url: String) -> Value {
    let resp = client.get(url).send().await.expect("get");
    resp.json().await.unwrap_or(Value::Null)
}

async fn parse(
    service: &Service,
    token: &str,
    path: &str,
    url: &str,
) -> (u16, Option<String>, Value) {
    let resp = reqwest::Client::new()
        .post(service.url(path))
        .bearer_auth(token)
        .json(&json!({ "url": url }))
        .send()
        .await
        .expect("parse");
    let status = resp.status().as_u16();
    let charged = resp
        .headers()
        .get("x-credits-charged")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    (status, charged, resp.json().await.unwrap_or(Value::Null))
}

fn listed<'a>(capabilities: &'a Value, id: &str) -> Option<&'a Value> {
    capabilities["data"]["platforms"]
        .as_array()?
        .iter()
        .find(|p| p["id"] == id)
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_dropped_in_platform_is_served_listed_and_priced_from_its_file() {
    let upstream = FakeUpstream::with_routes(vec![Route {
        method: "GET".into(),
        url: "https://api.mptest.example/ok".into(),
        header_constraints: vec![],
        body_constraint: None,
        status: 200,
        headers: vec![mediaparse_sdk::Header::new("content-type", "text/plain")],
        body: b"body of ok".to_vec(),
    }])
    .await
    .expect("fake upstream");
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path().join("extractors");
    std::fs::create_dir(&dir).expect("extractors dir");
    guest::install(&dir, "tiktok", &guest::component("tiktok", "1.0.0"));
    // The operator prices `newsite` before it exists: accepted (a valid id).
    let config = work.path().join("mediaparse.toml");
    std::fs::write(&config, "[platforms.newsite]\nprice = 4\n").expect("config");
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        extractors: Some(dir.clone()),
        config: Some(config),
        admin_token: Some(ADMIN.into()),
        ..Default::default()
    })
    .await
    .expect("service starts");
    let token = service.create_key(&["--rate-limit", "off"]).expect("key");
    service.add_credits("default", 100).expect("credits");
    let client = reqwest::Client::new();
    let capabilities = || get(&client, service.url("/api/v1/capabilities"));

    // Not there yet: an unknown platform, not in capabilities.
    let template_url = "https://www.templatecheck.com/video/abc123";
    let (status, _, body) = parse(
        &service,
        &token,
        "/api/v1/platforms/templatecheck/parse",
        template_url,
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (404, &json!("unknown_platform")),
        "{body}"
    );
    assert!(listed(&capabilities().await, "templatecheck").is_none());

    // The template's example extractor with its platform.toml, at a price
    // no default gives.
    let (wasm, toml) = paths::template_extractor();
    let manifest = std::fs::read_to_string(&toml).expect("template platform.toml");
    assert!(manifest.contains("\nprice = 1\n"), "{manifest}");
    let manifest = manifest.replace("\nprice = 1\n", "\nprice = 7\n");
    drop_file(&dir, "templatecheck.toml", manifest.as_bytes());
    drop_file(
        &dir,
        "templatecheck.wasm",
        &std::fs::read(&wasm).expect("template wasm"),
    );
    // The toml alone declares it (listed, not enabled); the wasm serves it.
    eventually("templatecheck is served", || async {
        listed(&capabilities().await, "templatecheck").is_some_and(|p| p["enabled"] == true)
    })
    .await;
    let caps = capabilities().await;
    let entry = listed(&caps, "templatecheck").expect("listed");
    assert_eq!(entry["enabled"], true, "{entry}");
    assert_eq!(entry["credits"], 7, "{entry}");
    assert_eq!(caps["data"]["billing"]["prices"]["templatecheck"], 7);
    assert_eq!(caps["data"]["billing"]["prices"]["tiktok"], 1);
    // Served at its own endpoint: the answer is the component's own
    // (the skeleton's "not implemented", code 302), not the host's refusal.
    let (status, charged, body) = parse(
        &service,
        &token,
        "/api/v1/platforms/templatecheck/parse",
        template_url,
    )
    .await;
    assert_eq!((status, &body["code"]), (400, &json!("302")), "{body}");
    assert_eq!(charged.as_deref(), Some("0"));
    assert!(
        body["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("templatecheck"),
        "{body}"
    );
    // And documented: its fixed path and platformData schema in /openapi.json.
    let doc = get(&client, service.url("/openapi.json")).await;
    assert!(
        doc["paths"]["/api/v1/platforms/templatecheck/parse"]["post"].is_object(),
        "no fixed path for templatecheck"
    );
    assert!(doc["components"]["schemas"]["PlatformDataTemplatecheck"].is_object());

    // A platform that returns media is charged: the test guest as `newsite`
    // (file price 9), with the operator's `[platforms.newsite] price = 4`.
    let mut toml = guest::manifest("newsite");
    toml = toml.replace("price = 1", "price = 9");
    drop_file(&dir, "newsite.toml", toml.as_bytes());
    drop_file(&dir, "newsite.wasm", &guest::component("newsite", "1.0.0"));
    eventually("newsite is served", || async {
        listed(&capabilities().await, "newsite").is_some_and(|p| p["enabled"] == true)
    })
    .await;
    assert_eq!(
        listed(&capabilities().await, "newsite").unwrap()["credits"],
        4
    );
    let (status, charged, body) = parse(
        &service,
        &token,
        "/api/v1/platforms/newsite/parse",
        "https://newsite.mptest.example/ok",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(charged.as_deref(), Some("4"));
    let balance = mediaparse::store::Store::open(&service.db)
        .and_then(|s| s.balance("default"))
        .expect("balance");
    assert_eq!(balance, 96);

    // A wasm without its toml is refused with a clear reason.
    drop_file(&dir, "lonely.wasm", &guest::component("lonely", "1.0.0"));
    let lonely = || async {
        let listing: Value = client
            .get(service.url("/api/v1/admin/extractors"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("admin listing")
            .json()
            .await
            .expect("json");
        listing["data"]["extractors"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["platform"] == "lonely").cloned())
            .unwrap_or(Value::Null)
    };
    eventually("lonely.wasm is refused", || async {
        lonely().await["status"] == "refused"
    })
    .await;
    let entry = lonely().await;
    let reason = entry["lastError"]["message"].as_str().unwrap_or_default();
    assert!(
        reason.contains("no lonely.toml beside lonely.wasm"),
        "{entry}"
    );
    let (status, _, body) = parse(
        &service,
        &token,
        "/api/v1/platforms/lonely/parse",
        "https://lonely.mptest.example/ok",
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (404, &json!("unknown_platform")),
        "{body}"
    );
    assert!(listed(&capabilities().await, "lonely").is_none());
}
