//! Shared helpers: a service with only the TikTok component loaded, a fake
//! upstream serving TikTok fixture cases, and small HTTP helpers.

use std::path::PathBuf;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

pub const ADMIN: &str = "operator-secret-for-tests-at-least-32-bytes";

/// The TikTok fixture cases that parse to media (price 1 each).
pub fn tiktok_cases() -> Vec<Case> {
    let dir = paths::workspace_root().join("extractors/tiktok/fixtures");
    Case::load_all(&dir)
        .expect("tiktok fixtures load")
        .into_iter()
        .filter(|c| matches!(c.name().as_str(), "video_post" | "photo_post"))
        .collect()
}

pub fn tiktok_urls() -> Vec<String> {
    let urls: Vec<String> = tiktok_cases().iter().map(|c| c.input.clone()).collect();
    assert_eq!(urls.len(), 2, "video_post and photo_post fixtures");
    urls
}

/// A folder holding only `tiktok.wasm` and the bundled `<id>.toml` files
/// (links), so a service starts fast. Every bundled platform stays known
/// (declared by its `.toml`); only tiktok is served.
///
/// One folder beside the bundled one, made once per test run and shared by
/// every service that asks, so its compiled-component cache is shared too
/// and tiktok compiles once, not once per service. Nothing writes into it.
pub fn tiktok_only() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let bundled = paths::extractors_dir();
        let mut name = bundled.file_name().unwrap().to_os_string();
        name.push("-tiktok-only");
        let dir = bundled.with_file_name(name);
        std::fs::create_dir_all(&dir).unwrap();
        let tomls = std::fs::read_dir(&bundled)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"));
        for src in tomls.chain([bundled.join("tiktok.wasm")]) {
            let dst = dir.join(src.file_name().unwrap());
            // A link from an earlier run may point at an older build folder.
            let _ = std::fs::remove_file(&dst);
            std::os::unix::fs::symlink(&src, &dst).unwrap();
        }
        dir
    })
    .clone()
}

pub struct Env {
    pub upstream: FakeUpstream,
    pub service: Service,
}

pub async fn start(extra_env: &[(&str, &str)]) -> Env {
    start_on(None, extra_env).await
}

/// Start (or restart, with `db`) a service with the admin API on.
pub async fn start_on(db: Option<PathBuf>, extra_env: &[(&str, &str)]) -> Env {
    let upstream = FakeUpstream::start(&tiktok_cases()).await.unwrap();
    let extractors = tiktok_only();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        db,
        extractors: Some(extractors),
        admin_token: Some(ADMIN.into()),
        extra_env: extra_env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    })
    .await
    .unwrap();
    Env { upstream, service }
}

pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Answer {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
    pub fn charged(&self) -> i64 {
        self.headers
            .get("x-credits-charged")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1)
    }
    pub fn request_id(&self) -> String {
        self.headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }
    /// The envelope of an error: status mirrored, data null, code as expected.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!((self.status, self.code()), (status, code), "{}", self.body);
        assert_eq!(self.body["status"], status);
        assert!(self.body["data"].is_null());
    }
}

pub async fn send(req: reqwest::RequestBuilder) -> Answer {
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json().await.unwrap_or(Value::Null);
    Answer {
        status,
        body,
        headers,
    }
}

pub async fn parse(service: &Service, token: Option<&str>, url: &str) -> Answer {
    let mut req = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .json(&json!({ "url": url }));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    send(req).await
}

pub async fn account_view(service: &Service, token: &str) -> Answer {
    send(
        reqwest::Client::new()
            .get(service.url("/api/v1/account"))
            .bearer_auth(token),
    )
    .await
}

/// An admin request with the operator token.
pub async fn admin(
    service: &Service,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Answer {
    admin_as(service, Some(ADMIN), method, path, body).await
}

pub async fn admin_as(
    service: &Service,
    token: Option<&str>,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let mut req = reqwest::Client::new().request(method, service.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    send(req).await
}

/// `mediaparse ARGS… --json` against the service's database, parsed.
pub fn cli_json(service: &Service, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out) = service.cli(&all).unwrap();
    assert_eq!(code, 0, "mediaparse {args:?} failed: {out}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// Create a key on `account` through the CLI; returns (id, token).
pub fn create_key(service: &Service, account: &str, extra: &[&str]) -> (String, String) {
    let mut args = vec!["keys", "create", "--name", "test", "--account", account];
    args.extend_from_slice(extra);
    let v = cli_json(service, &args);
    (
        v["id"].as_str().unwrap().to_string(),
        v["token"].as_str().unwrap().to_string(),
    )
}

/// Σ grants − Σ ledger = balance, for every account in the file.
pub fn assert_books_balance(db: &std::path::Path) -> Vec<mediaparse::store::AccountSummary> {
    let store = mediaparse::store::Store::open(db).unwrap();
    let accounts = store.accounts().unwrap();
    for a in &accounts {
        assert!(a.consistent(), "books do not balance: {a:?}");
    }
    accounts
}
