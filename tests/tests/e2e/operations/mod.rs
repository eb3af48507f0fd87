//! Operating the service: hot reload of components and of the
//! configuration, the compiled cache, containment of hostile components,
//! secrets, metrics, graceful shutdown, swapping under load, and the sealed
//! sandbox. One module per topic; every test runs the real binary against
//! real components (the test guest, `tests/guests/mptest`, patched into
//! whatever platform and version a test needs).

mod containment;
mod diagnose;
mod reload;
mod sealed;
mod service_ops;
mod swap_load;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mediaparse_tests::fake_upstream::{FakeUpstream, Route};
use mediaparse_tests::guest;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

pub const ADMIN: &str = "operator-token-for-tests-at-least-32-bytes";

/// The fake upstream the test guest's `ok` and `slow` modes fetch from.
pub async fn upstream() -> FakeUpstream {
    let route = |path: &str| Route {
        method: "GET".into(),
        url: format!("https://api.mptest.example/{path}"),
        header_constraints: vec![],
        body_constraint: None,
        status: 200,
        headers: vec![mediaparse_sdk::Header::new("content-type", "text/plain")],
        body: format!("body of {path}").into_bytes(),
    };
    FakeUpstream::with_routes(vec![route("ok"), route("slow")])
        .await
        .expect("fake upstream")
}

/// A temporary extractors folder holding the test guest as each `(platform, version)`.
pub fn extractors(components: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (platform, version) in components {
        guest::install(dir.path(), platform, &guest::component(platform, version));
    }
    dir
}

pub struct Running {
    pub service: Service,
    pub token: String,
    pub client: reqwest::Client,
}

pub async fn start(
    extractors: &Path,
    upstream: &str,
    config: Option<PathBuf>,
    log_file: Option<PathBuf>,
) -> Running {
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.to_string()),
        extractors: Some(extractors.to_path_buf()),
        config,
        admin_token: Some(ADMIN.into()),
        log_file,
        ..Default::default()
    })
    .await
    .expect("service starts");
    let token = service.create_key(&["--rate-limit", "off"]).expect("key");
    service.add_credits("default", 1_000_000).expect("credits");
    Running {
        service,
        token,
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("client"),
    }
}

/// What one parse answered.
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub credits: Option<String>,
    pub request_id: Option<String>,
    pub elapsed: Duration,
}

impl Running {
    /// Parse `https://{platform}.mptest.example/{mode}` on the common endpoint.
    pub async fn parse(&self, platform: &str, mode: &str) -> Answer {
        let started = Instant::now();
        let resp = self
            .client
            .post(self.service.url("/api/v1/parse"))
            .bearer_auth(&self.token)
            .json(&json!({"url": format!("https://{platform}.mptest.example/{mode}")}))
            .send()
            .await
            .expect("parse request");
        let status = resp.status().as_u16();
        let header = |n: &str| {
            resp.headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let (credits, request_id) = (header("x-credits-charged"), header("x-request-id"));
        let body = resp.json().await.unwrap_or(Value::Null);
        Answer {
            status,
            body,
            credits,
            request_id,
            elapsed: started.elapsed(),
        }
    }

    /// The version serving `platform`, as a parse reports it.
    pub async fn serving_version(&self, platform: &str) -> Option<String> {
        let a = self.parse(platform, "ok").await;
        a.body["data"]["title"]
            .as_str()
            .and_then(|t| t.strip_prefix("mptest "))
            .map(String::from)
    }

    pub async fn admin_extractors(&self) -> Value {
        let resp = self
            .client
            .get(self.service.url("/api/v1/admin/extractors"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("admin listing");
        assert_eq!(resp.status().as_u16(), 200);
        resp.json().await.expect("json")
    }

    /// The admin listing's entry for `platform`.
    pub async fn admin_entry(&self, platform: &str) -> Value {
        let listing = self.admin_extractors().await;
        listing["data"]["extractors"]
            .as_array()
            .and_then(|a| a.iter().find(|e| e["platform"] == platform).cloned())
            .unwrap_or(Value::Null)
    }

    pub async fn metrics(&self) -> String {
        self.client
            .get(self.service.url("/metrics"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text")
    }

    pub fn balance(&self) -> i64 {
        mediaparse::store::Store::open(&self.service.db)
            .and_then(|s| s.balance("default"))
            .expect("balance")
    }
}

/// Poll `check` every 20 ms until it holds; panic after `limit`. Returns the time it took.
pub async fn eventually<F, Fut>(what: &str, limit: Duration, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The value of one metric line (`name{labels}`), 0 when absent.
pub fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0.0)
}
