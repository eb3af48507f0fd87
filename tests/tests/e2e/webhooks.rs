//! Webhooks end to end: a real receiver on loopback (the service runs in
//! test mode, where plain http to loopback is allowed) verifies each POST's
//! Standard Webhooks signature with the key's secret. Events are queued
//! through the admin API's `webhook-test` operation.

use std::path::Path;
use std::time::{Duration, Instant};

use mediaparse_tests::service::{Service, ServiceOptions};

use crate::webhook_receiver::Receiver;
use serde_json::{Value, json};

const ADMIN: &str = "operator-token-of-the-webhooks-rig-0123456789";

/// Short retries so the test sees them: `first_retry_ms`, then twice that.
fn config(dir: &Path, first_retry_ms: u64) -> std::path::PathBuf {
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            "[webhooks]\nfirst_retry_ms = {first_retry_ms}\nmax_retry_interval_ms = {}\npoll_ms = 50\n",
            2 * first_retry_ms
        ),
    )
    .expect("config");
    path
}

async fn start(dir: &Path, db: &Path, first_retry_ms: u64) -> Service {
    // No extractors: webhooks need none, and the service starts at once.
    let extractors = dir.join("extractors");
    std::fs::create_dir_all(&extractors).expect("extractors dir");
    Service::start(ServiceOptions {
        db: Some(db.to_path_buf()),
        extractors: Some(extractors),
        // The upstream override is what puts webhooks in test mode.
        upstream: Some("http://127.0.0.1:9".into()),
        config: Some(config(dir, first_retry_ms)),
        admin_token: Some(ADMIN.into()),
        ..Default::default()
    })
    .await
    .expect("service")
}

async fn admin(service: &Service, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method.parse().unwrap(), service.url(path))
        .bearer_auth(ADMIN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let resp = request.send().await.expect("admin request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The id of the only key.
fn key_id(service: &Service) -> String {
    let (code, out) = service.cli(&["keys", "list", "--json"]).expect("cli");
    assert_eq!(code, 0, "{out}");
    let keys: Value = serde_json::from_str(out.trim()).expect("json");
    keys[0]["id"].as_str().expect("a key id").to_string()
}

async fn new_secret(service: &Service, key: &str) -> String {
    let (status, body) = admin(
        service,
        "POST",
        &format!("/api/v1/admin/keys/{key}/webhook-secret"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let secret = body["data"]["secret"].as_str().expect("secret").to_string();
    assert!(secret.starts_with("whsec_"), "{body}");
    secret
}

async fn send_test_event(service: &Service, key: &str, url: &str) -> String {
    let (status, body) = admin(
        service,
        "POST",
        &format!("/api/v1/admin/keys/{key}/webhook-test"),
        Some(json!({ "url": url })),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    body["data"]["id"]
        .as_str()
        .expect("delivery id")
        .to_string()
}

/// Wait (at most 30 s) until delivery `id` is listed in `state` with `attempts` attempts.
async fn wait_listed(
    service: &Service,
    key: &str,
    id: &str,
    state: &str,
    attempts: usize,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = admin(
            service,
            "GET",
            &format!("/api/v1/admin/webhooks?key={key}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let delivery = body["data"]
            .as_array()
            .and_then(|ds| ds.iter().find(|d| d["id"] == id))
            .cloned()
            .unwrap_or(Value::Null);
        if delivery["state"] == state
            && delivery["attempts"].as_array().map(Vec::len) == Some(attempts)
        {
            return delivery;
        }
        assert!(Instant::now() < deadline, "delivery {id} is {delivery}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_receiver_that_fails_twice_gets_three_signed_attempts_and_rotation_retires_the_old_secret()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let service = start(dir.path(), &dir.path().join("mediaparse.db"), 300).await;
    service.create_key(&[]).expect("key");
    let key = key_id(&service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver = Receiver::on(listener, &[500, 500]).await;

    // Without a secret a delivery is refused, with the reason recorded.
    let refused = send_test_event(&service, &key, &receiver.url).await;
    let listed = wait_listed(&service, &key, &refused, "failed", 1).await;
    assert!(
        listed["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("no webhook secret")),
        "{listed}"
    );
    assert!(receiver.received().is_empty(), "nothing was sent");

    // Plain http elsewhere than loopback is refused at once, even in test mode.
    let (status, body) = admin(
        &service,
        "POST",
        &format!("/api/v1/admin/keys/{key}/webhook-test"),
        Some(json!({ "url": "http://10.0.0.1/hooks/in" })),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );

    let secret = new_secret(&service, &key).await;
    let id = send_test_event(&service, &key, &receiver.url).await;
    let got = receiver.wait_for(3).await;
    for post in &got {
        assert_eq!(
            post.id, id,
            "every attempt carries the delivery's webhook-id"
        );
        assert!(post.verifies_with(&secret), "{post:?}");
        let body = post.json();
        assert_eq!(body["type"], "webhook.test", "{body}");
        assert_eq!(body["data"]["keyId"], key.as_str(), "{body}");
        assert!(
            body["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{body}"
        );
    }
    let listed = wait_listed(&service, &key, &id, "delivered", 3).await;
    let attempts = listed["attempts"].as_array().unwrap();
    let statuses: Vec<_> = attempts.iter().map(|a| a["status"].as_u64()).collect();
    assert_eq!(statuses, [Some(500), Some(500), Some(200)], "{listed}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{listed}"
    );
    // Retries come after the backoff, not at once (the first is at least 75 % of 300 ms).
    let at = |i: usize| {
        chrono::DateTime::parse_from_rfc3339(attempts[i]["at"].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    };
    assert!(at(1) - at(0) >= 225, "{listed}");
    assert_eq!(receiver.received().len(), 3, "exactly three attempts");

    // Rotation: the next event verifies with the new secret only.
    let rotated = new_secret(&service, &key).await;
    assert_ne!(rotated, secret);
    let next = send_test_event(&service, &key, &receiver.url).await;
    let got = receiver.wait_for(4).await;
    let last = &got[3];
    assert_eq!(last.id, next);
    assert!(last.verifies_with(&rotated), "{last:?}");
    assert!(
        !last.verifies_with(&secret),
        "the old secret still verifies"
    );

    let (_, metrics) = {
        let resp = reqwest::Client::new()
            .get(service.url("/metrics"))
            .bearer_auth(ADMIN)
            .send()
            .await
            .expect("metrics");
        (resp.status(), resp.text().await.expect("text"))
    };
    for line in [
        r#"mediaparse_webhook_deliveries_total{outcome="retrying"} 2"#,
        r#"mediaparse_webhook_deliveries_total{outcome="delivered"} 2"#,
        r#"mediaparse_webhook_deliveries_total{outcome="failed"} 1"#,
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
}

#[tokio::test]
async fn a_pending_delivery_survives_a_restart_and_is_delivered_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("mediaparse.db");
    // The retry comes 1.5 s at the soonest: the service is killed before it.
    let mut service = start(dir.path(), &db, 2000).await;
    service.create_key(&[]).expect("key");
    let key = key_id(&service);
    let secret = new_secret(&service, &key).await;
    // A port with nobody listening yet: the first attempt cannot connect.
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/hooks/in");
    let id = send_test_event(&service, &key, &url).await;
    let listed = wait_listed(&service, &key, &id, "pending", 1).await;
    assert!(
        listed["attempts"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("connect")),
        "{listed}"
    );
    // The service dies with the delivery pending.
    service.kill().await;
    drop(service);

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the receiver's port");
    let receiver = Receiver::on(listener, &[]).await;
    let service = start(dir.path(), &db, 2000).await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].id, id);
    assert!(got[0].verifies_with(&secret));
    let listed = wait_listed(&service, &key, &id, "delivered", 2).await;
    assert_eq!(listed["attempts"][1]["status"], 200, "{listed}");
}

/// The console: a customer creates the key's webhook secret (shown once,
/// after a confirmation) and sees that key's deliveries; the operator sees
/// every account's.
#[tokio::test]
async fn the_console_creates_the_secret_and_lists_deliveries_for_customer_and_operator() {
    use crate::console::support::{Browser, between};
    use reqwest::StatusCode as Status;

    let dir = tempfile::tempdir().expect("tempdir");
    let service = start(dir.path(), &dir.path().join("mediaparse.db"), 300).await;
    let (status, invited) = admin(
        &service,
        "POST",
        "/api/v1/admin/users",
        Some(json!({"account": "acme", "email": "ann@example.com"})),
    )
    .await;
    assert_eq!(status, 201, "{invited}");
    let mut ann = Browser::new(&service);
    ann.set_password(
        invited["data"]["link"].as_str().expect("link"),
        "a long enough password",
    )
    .await;
    let created = ann
        .post(
            "/console/keys",
            &[("name", "app"), ("expires", ""), ("scope", "all")],
        )
        .await;
    assert_eq!(created.0, Status::CREATED, "{}", created.1);
    let key = between(&created.1, "href=\"/console/keys/", "\"");
    let page = ann.get(&format!("/console/keys/{key}")).await.1;
    assert!(page.contains("New webhook secret"), "{page}");

    let path = format!("/console/keys/{key}/webhook-secret");
    let unconfirmed = ann.post(&path, &[]).await;
    assert_eq!(unconfirmed.0, Status::BAD_REQUEST, "{}", unconfirmed.1);
    let (status, page) = ann.post(&path, &[("confirm", "yes")]).await;
    assert_eq!(status, Status::OK, "{page}");
    let secret = between(&page, "id=\"webhook-secret\">", "<");
    assert!(secret.starts_with("whsec_"), "{secret}");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver = Receiver::on(listener, &[503]).await;
    let id = send_test_event(&service, &key, &receiver.url).await;
    let got = receiver.wait_for(2).await;
    assert!(got.iter().all(|p| p.verifies_with(&secret)), "{got:?}");
    wait_listed(&service, &key, &id, "delivered", 2).await;

    let (status, page) = ann.get(&format!("/console/keys/{key}/webhooks")).await;
    assert_eq!(status, Status::OK, "{page}");
    for text in [
        "webhook.test",
        "delivered",
        "HTTP 503",
        "HTTP 200",
        &receiver.url,
    ] {
        assert!(page.contains(text), "{text} in {page}");
    }
    // Another account's key page is not found for ann.
    let other = ann.get("/console/keys/key_000000000000/webhooks").await;
    assert_eq!(other.0, Status::NOT_FOUND);

    let mut operator = Browser::new(&service);
    operator.set_cookie("mp_form", "self-made");
    let signed_in = operator
        .post_raw(
            "/console/admin/sign-in",
            &[("csrf", "self-made"), ("token", ADMIN)],
        )
        .await;
    assert_eq!(signed_in.0, Status::SEE_OTHER, "{}", signed_in.1);
    let (status, page) = operator.get("/console/admin/webhooks").await;
    assert_eq!(status, Status::OK, "{page}");
    for text in [key.as_str(), "acme", "delivered", "HTTP 200"] {
        assert!(page.contains(text), "{text} in {page}");
    }
}
