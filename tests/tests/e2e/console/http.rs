//! The console over plain HTTP (a cookie jar of our own, no redirects
//! followed): the customer flow end to end, and the security rules — CSRF
//! refusals, the sign-in throttle, one answer for unknown e-mail and wrong
//! password, sessions and API tokens kept apart, sign-out everywhere.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::support::{Browser, between, invite, token_in};
use crate::accounts::support::{self, ADMIN};

#[tokio::test]
async fn customer_flow_keys_playground_usage_and_rotation() {
    let env = support::start(&[]).await;
    let service = &env.service;
    let link = invite(service, "acme", "ann@example.com").await;
    service.add_credits("acme", 10).unwrap();

    let mut ann = Browser::new(service);
    ann.set_password(&link, "a long enough password").await;
    let overview = ann.get("/console").await;
    assert_eq!(overview.0, StatusCode::OK);
    assert!(overview.1.contains("10 credits"), "{}", overview.1);

    // A key limited to two platforms; the token is shown once.
    let created = ann
        .post(
            "/console/keys",
            &[
                ("name", "app"),
                ("expires", ""),
                ("scope", "chosen"),
                ("platform", "tiktok"),
                ("platform", "youtube"),
            ],
        )
        .await;
    assert_eq!(created.0, StatusCode::CREATED, "{}", created.1);
    let token = token_in(&created.1);
    assert!(created.1.contains("tiktok, youtube"));
    let key_id = between(&created.1, "href=\"/console/keys/", "\"");
    let last_used = |page: &str| between(page, "<td class=\"last-used\">", "<");
    assert_eq!(last_used(&created.1), "never");

    // The API takes it; the platform list holds.
    let url = &support::tiktok_urls()[0];
    let parsed = support::parse(service, Some(&token), url).await;
    assert_eq!(
        (parsed.status, parsed.charged()),
        (200, 1),
        "{}",
        parsed.body
    );

    // The playground: a real, charged parse as the chosen key.
    let played = ann
        .post(
            "/console/playground",
            &[
                ("link", url),
                ("key", &key_id),
                ("endpoint", ""),
                ("delivery", "tunnel"),
            ],
        )
        .await;
    assert_eq!(played.0, StatusCode::OK);
    assert!(played.1.contains("HTTP 200"), "{}", played.1);
    assert!(played.1.contains("1 credit charged"), "{}", played.1);
    let overview = ann.get("/console").await.1;
    assert!(overview.contains("8 credits"), "two charges: {overview}");
    // The keys page shows the last charged parse (UTC minutes) from the ledger.
    let keys = ann.get("/console/keys").await.1;
    let shown = last_used(&keys);
    let now = chrono::Utc::now();
    let near =
        [now, now - chrono::Duration::minutes(1)].map(|t| t.format("%Y-%m-%d %H:%M").to_string());
    assert!(near.contains(&shown), "last used {shown:?}, now {near:?}");
    assert!(keys.contains("last charged parse"), "said so on the page");

    // Edit keeps the token.
    let edited = ann
        .post(
            &format!("/console/keys/{key_id}"),
            &[
                ("name", "app renamed"),
                ("expires", "2099-12-31"),
                ("scope", "all"),
            ],
        )
        .await;
    assert_eq!(edited.0, StatusCode::OK, "{}", edited.1);
    assert!(edited.1.contains("The token is unchanged"));
    let after_edit = support::parse(service, Some(&token), url).await;
    assert_eq!(after_edit.status, 200, "{}", after_edit.body);

    // Reset: a new token shown once; the old one is refused by the API.
    let unconfirmed = ann
        .post(&format!("/console/keys/{key_id}/reset"), &[])
        .await;
    assert_eq!(unconfirmed.0, StatusCode::BAD_REQUEST);
    let reset = ann
        .post(
            &format!("/console/keys/{key_id}/reset"),
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(reset.0, StatusCode::OK);
    let new_token = token_in(&reset.1);
    assert_ne!(new_token, token);
    support::parse(service, Some(&token), url)
        .await
        .assert_error(401, "invalid_token");
    assert_eq!(
        support::parse(service, Some(&new_token), url).await.status,
        200
    );

    // Usage: totals and the CSV of every charge.
    let usage = ann.get("/console/usage?platform=tiktok").await;
    assert!(
        usage.1.contains("<strong>4</strong> charged parses"),
        "{}",
        usage.1
    );
    let (status, csv) = ann.get("/console/usage.csv?platform=tiktok").await;
    assert_eq!(status, StatusCode::OK);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "time,platform,key,credits,request_id");
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.contains(",tiktok,") && l.contains(&key_id))
    );

    // Another account's key is not found, like a key that does not exist.
    service.create_key(&["--account", "other"]).unwrap();
    let (_, listing) = service
        .cli(&["keys", "list", "--account", "other", "--json"])
        .unwrap();
    let theirs: Value = serde_json::from_str(&listing).unwrap();
    let their_id = theirs[0]["id"].as_str().unwrap();
    let (status, _) = ann.get(&format!("/console/keys/{their_id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = ann.get("/console/keys/key_does_not_exist").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Delete.
    let deleted = ann
        .post(
            &format!("/console/keys/{key_id}/delete"),
            &[("confirm", "yes")],
        )
        .await;
    assert_eq!(deleted.0, StatusCode::OK);
    support::parse(service, Some(&new_token), url)
        .await
        .assert_error(401, "invalid_token");
    // Pages render (docs with the key prefix scheme).
    assert!(ann.get("/console/docs").await.1.contains("/api/v1/parse"));
}

#[tokio::test]
async fn csrf_throttle_and_one_answer_for_bad_credentials() {
    let env = support::start(&[]).await;
    let service = &env.service;
    let link = invite(service, "acme", "bob@example.com").await;
    let mut bob = Browser::new(service);
    bob.set_password(&link, "bob's long password").await;

    // State changes without the session's CSRF token are refused.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let forged = client
        .post(service.url("/console/keys"))
        .header("cookie", bob.cookie_header())
        .form(&[("name", "evil"), ("scope", "all"), ("csrf", "guess")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let no_field = client
        .post(service.url("/console/sign-out-everywhere"))
        .header("cookie", bob.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(no_field.status(), StatusCode::FORBIDDEN);
    // A sign-in form without its pre-session cookie is refused too.
    let no_cookie = client
        .post(service.url("/console/sign-in"))
        .form(&[
            ("email", "bob@example.com"),
            ("password", "x"),
            ("csrf", "y"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(no_cookie.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        bob.get("/console").await.0,
        StatusCode::OK,
        "still signed in"
    );

    // Unknown e-mail and wrong password: the same status and message.
    let mut stranger = Browser::new(service);
    let unknown = stranger
        .sign_in("nobody@example.com", "whatever password")
        .await;
    let wrong = stranger
        .sign_in("bob@example.com", "not bob's password")
        .await;
    assert_eq!(unknown.0, StatusCode::UNAUTHORIZED);
    assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
    let message = |page: &str| between(page, "role=\"alert\">", "<");
    assert_eq!(message(&unknown.1), message(&wrong.1));
    assert_eq!(message(&wrong.1), "Wrong e-mail or password.");

    // Throttled per e-mail: five tries at once, then 429 (even with the right password).
    for _ in 0..4 {
        assert_eq!(
            stranger
                .sign_in("bob@example.com", "nope nope nope")
                .await
                .0,
            StatusCode::UNAUTHORIZED
        );
    }
    let throttled = stranger
        .sign_in("bob@example.com", "bob's long password")
        .await;
    assert_eq!(
        throttled.0,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        throttled.1
    );
    // Per address: twenty tries from one address, whatever the e-mail.
    let mut last = StatusCode::OK;
    for i in 0..20 {
        last = stranger
            .sign_in(&format!("n{i}@example.com"), "whatever password")
            .await
            .0;
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);

    // The session cookie is no API token, and an API token opens no console page.
    let session = bob.session_token();
    let api = support::account_view(service, &session).await;
    api.assert_error(401, "invalid_token");
    let token = service.create_key(&["--account", "acme"]).unwrap();
    let with_bearer = client
        .get(service.url("/console"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(with_bearer.status(), StatusCode::SEE_OTHER);
    let token_as_cookie = client
        .get(service.url("/console"))
        .header("cookie", format!("mp_session={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(token_as_cookie.status(), StatusCode::SEE_OTHER);

    // Sign out everywhere ends the other browser's session too.
    let mut bob2 = Browser::new(service);
    bob2.set_cookie("mp_session", &session);
    assert_eq!(bob2.get("/console").await.0, StatusCode::OK);
    let out = bob.post("/console/sign-out-everywhere", &[]).await;
    assert_eq!(out.0, StatusCode::SEE_OTHER);
    assert_eq!(bob2.get("/console").await.0, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn session_cookie_attributes_and_operator_pages() {
    let env = support::start(&[]).await;
    let service = &env.service;
    let link = invite(service, "acme", "cy@example.com").await;
    let mut cy = Browser::new(service);
    let set_cookie = cy.set_password(&link, "cy's long password!").await;
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    assert!(set_cookie.contains("Path=/console"), "{set_cookie}");
    assert!(!set_cookie.contains("Secure"), "plain http: {set_cookie}");
    // The link works once.
    let (status, _) = Browser::new(service).get(&link_path(&link)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A customer is no operator.
    assert_eq!(cy.get("/console/admin").await.0, StatusCode::SEE_OTHER);

    // The operator signs in with the operator token, invites and grants.
    let mut op = Browser::new(service);
    let page = op.get("/console/admin/sign-in").await.1;
    let csrf = between(&page, "name=\"csrf\" value=\"", "\"");
    let wrong = op
        .post_raw(
            "/console/admin/sign-in",
            &[("token", "nope"), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
    let signed = op
        .post_raw(
            "/console/admin/sign-in",
            &[("token", ADMIN), ("csrf", &csrf)],
        )
        .await;
    assert_eq!(signed.0, StatusCode::SEE_OTHER);
    let accounts = op.get("/console/admin").await;
    assert_eq!(accounts.0, StatusCode::OK);
    assert!(accounts.1.contains("acme"));
    let invited = op
        .post(
            "/console/admin/invite",
            &[("account", "beta"), ("email", "dee@example.com")],
        )
        .await;
    assert_eq!(invited.0, StatusCode::CREATED, "{}", invited.1);
    let dee_link = between(&invited.1, "id=\"invite-link\">", "<");
    assert!(dee_link.contains("/console/invite/"));
    let granted = op
        .post(
            "/console/admin/accounts/beta/credits",
            &[("kind", "add"), ("amount", "25"), ("reason", "trial")],
        )
        .await;
    assert_eq!(granted.0, StatusCode::OK, "{}", granted.1);
    assert!(granted.1.contains("25 credits"));
    let mut dee = Browser::new(service);
    dee.set_password(&dee_link, "dee's long password").await;
    assert!(dee.get("/console").await.1.contains("25 credits"));
    // The admin API takes a reason too; both land in the grants log the
    // account's page shows, newest first.
    let by_api = reqwest::Client::new()
        .post(service.url("/api/v1/admin/accounts/beta/credits"))
        .bearer_auth(ADMIN)
        .json(&json!({"set": 20, "reason": "goodwill <correction>"}))
        .send()
        .await
        .unwrap();
    assert_eq!(by_api.status(), StatusCode::OK);
    let beta = op.get("/console/admin/accounts/beta").await.1;
    let log = between(&beta, "id=\"grants\"", "</table>");
    let (set_at, add_at) = (
        log.find("goodwill &lt;correction&gt;")
            .expect("API reason, escaped"),
        log.find("trial").expect("page reason"),
    );
    assert!(set_at < add_at, "newest first: {log}");
    assert!(log.contains("-5") && log.contains("+25"), "{log}");
    for page in [
        "/console/admin/extractors",
        "/console/admin/failures",
        "/console/admin/accounts/beta",
    ] {
        assert_eq!(op.get(page).await.0, StatusCode::OK, "{page}");
    }
    // The admin API lists the users; a session cookie does not open it.
    let users: Value = reqwest::Client::new()
        .get(service.url("/api/v1/admin/users?account=beta"))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(users["data"][0]["email"], json!("dee@example.com"));
    assert_eq!(users["data"][0]["active"], json!(true));
    let by_cookie = reqwest::Client::new()
        .get(service.url("/api/v1/admin/users"))
        .header("cookie", op.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(by_cookie.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn cli_invites_and_the_link_sets_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mediaparse.toml");
    std::fs::write(&config, "[console]\nsignup = \"invite\"\n").unwrap();
    let upstream = mediaparse_tests::fake_upstream::FakeUpstream::start(&support::tiktok_cases())
        .await
        .unwrap();
    let extractors = support::tiktok_only();
    let service =
        mediaparse_tests::service::Service::start(mediaparse_tests::service::ServiceOptions {
            upstream: Some(upstream.base_url()),
            extractors: Some(extractors),
            config: Some(config),
            ..Default::default()
        })
        .await
        .unwrap();
    let base = service.base_url.clone();
    let (code, out) = service
        .cli(&[
            "users",
            "invite",
            "--account",
            "acme",
            "--email",
            "eve@example.com",
            "--base-url",
            &base,
            "--json",
        ])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    let invited: Value = serde_json::from_str(&out).unwrap();
    let link = invited["link"].as_str().unwrap();
    assert!(link.starts_with(&format!("{base}/console/invite/")));
    let mut eve = Browser::new(&service);
    eve.set_password(link, "eve's long password").await;
    assert_eq!(eve.get("/console").await.0, StatusCode::OK);
}

fn link_path(link: &str) -> String {
    link.find("/console/")
        .map(|i| link[i..].to_string())
        .unwrap_or_default()
}
