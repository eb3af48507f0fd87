//! The admin HTTP API: accounts, keys (create, list, get, edit, reset,
//! delete), credits and usage, behind the operator token, agreeing with the CLI.

use reqwest::Method;
use serde_json::json;

use super::support::{self, admin};

#[tokio::test]
async fn operator_manages_accounts_keys_credits_and_usage_over_http() {
    let env = support::start(&[]).await;
    let s = &env.service;
    let url = &support::tiktok_urls()[0];

    let created = admin(
        s,
        Method::POST,
        "/api/v1/admin/accounts",
        Some(json!({"id": "acme"})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["data"]["balance"], 0);
    admin(
        s,
        Method::POST,
        "/api/v1/admin/accounts",
        Some(json!({"id": "acme"})),
    )
    .await
    .assert_error(409, "account_exists");

    let key = admin(
        s,
        Method::POST,
        "/api/v1/admin/keys",
        Some(json!({"name": "web", "account": "acme", "platforms": ["tiktok", "youtube"], "expiresOn": "2099-12-31"})),
    )
    .await;
    assert_eq!(key.status, 201, "{}", key.body);
    let id = key.body["data"]["id"].as_str().unwrap().to_string();
    let token = key.body["data"]["token"].as_str().unwrap().to_string();
    assert!(token.starts_with("mp_live_"));
    admin(
        s,
        Method::POST,
        "/api/v1/admin/keys",
        Some(json!({"name": "x", "platforms": ["myspace"]})),
    )
    .await
    .assert_error(400, "invalid_request");
    admin(
        s,
        Method::POST,
        "/api/v1/admin/keys",
        Some(json!({"name": "x", "expiresOn": "soon"})),
    )
    .await
    .assert_error(400, "invalid_request");

    // Credits: add, set, and refusals.
    let credits = "/api/v1/admin/accounts/acme/credits";
    let added = admin(s, Method::POST, credits, Some(json!({"add": 5}))).await;
    assert_eq!(added.body["data"]["balance"], 5, "{}", added.body);
    let set = admin(s, Method::POST, credits, Some(json!({"set": 3}))).await;
    assert_eq!(
        (
            set.body["data"]["balance"].as_i64(),
            set.body["data"]["change"].as_i64()
        ),
        (Some(3), Some(-2))
    );
    admin(s, Method::POST, credits, Some(json!({"add": 1, "set": 1})))
        .await
        .assert_error(400, "invalid_request");
    admin(s, Method::POST, credits, Some(json!({"add": 0})))
        .await
        .assert_error(400, "invalid_request");

    let parsed = support::parse(s, Some(&token), url).await;
    assert_eq!(
        (parsed.status, parsed.charged()),
        (200, 1),
        "{}",
        parsed.body
    );

    // Listing shows the prefix, never the token.
    let listed = admin(s, Method::GET, "/api/v1/admin/keys?account=acme", None).await;
    let keys = listed.body["data"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert!(!listed.body.to_string().contains(&token));
    assert!(token.starts_with(keys[0]["tokenPrefix"].as_str().unwrap()));

    // Edit keeps the token; unknown members and unknown keys are refused.
    let path = format!("/api/v1/admin/keys/{id}");
    let edited = admin(
        s,
        Method::PATCH,
        &path,
        Some(json!({"name": "web2", "rateLimitPerMinute": 100, "expiresOn": null})),
    )
    .await;
    assert_eq!(edited.status, 200, "{}", edited.body);
    let data = &edited.body["data"];
    assert_eq!(
        (data["name"].as_str(), data["rateLimitPerMinute"].as_i64()),
        (Some("web2"), Some(100))
    );
    assert_eq!(data["expiresOn"], serde_json::Value::Null);
    assert_eq!(data["platforms"], json!(["tiktok", "youtube"]));
    assert_eq!(support::parse(s, Some(&token), url).await.status, 200);
    admin(s, Method::PATCH, &path, Some(json!({"bogus": 1})))
        .await
        .assert_error(400, "invalid_request");
    admin(
        s,
        Method::PATCH,
        "/api/v1/admin/keys/key_missing",
        Some(json!({"name": "x"})),
    )
    .await
    .assert_error(404, "key_not_found");

    // Reset: new token, old one refused at once.
    let reset = admin(s, Method::POST, &format!("{path}/reset"), None).await;
    let new_token = reset.body["data"]["token"].as_str().unwrap().to_string();
    assert_eq!(reset.body["data"]["name"], "web2");
    support::parse(s, Some(&token), url)
        .await
        .assert_error(401, "invalid_token");

    // Usage by account, platform and time range.
    let usage = admin(s, Method::GET, "/api/v1/admin/usage?account=acme", None).await;
    let u = &usage.body["data"];
    assert_eq!(
        (u["requests"].as_i64(), u["credits"].as_i64()),
        (Some(2), Some(2)),
        "{u}"
    );
    assert_eq!(u["byPlatform"][0]["name"], "tiktok");
    assert_eq!(u["byKey"][0]["name"], id.as_str());
    let yt = admin(
        s,
        Method::GET,
        "/api/v1/admin/usage?account=acme&platform=youtube",
        None,
    )
    .await;
    assert_eq!(yt.body["data"]["requests"], 0);
    let old = admin(
        s,
        Method::GET,
        "/api/v1/admin/usage?from=2000-01-01&to=2000-01-02",
        None,
    )
    .await;
    assert_eq!(old.body["data"]["requests"], 0);
    admin(s, Method::GET, "/api/v1/admin/usage?from=someday", None)
        .await
        .assert_error(400, "invalid_request");
    admin(s, Method::GET, "/api/v1/admin/usage?nope=1", None)
        .await
        .assert_error(400, "invalid_request");

    let account = admin(s, Method::GET, "/api/v1/admin/accounts/acme", None).await;
    let a = &account.body["data"];
    assert_eq!(
        (
            a["balance"].as_i64(),
            a["granted"].as_i64(),
            a["spent"].as_i64(),
            a["keys"].as_i64()
        ),
        (Some(1), Some(3), Some(2), Some(1))
    );
    admin(s, Method::GET, "/api/v1/admin/accounts/nobody", None)
        .await
        .assert_error(404, "account_not_found");
    // The CLI reads the same books.
    let shown = support::cli_json(s, &["credits", "show", "--account", "acme"]);
    assert_eq!(shown["balance"], 1);
    let cli_usage = support::cli_json(s, &["usage", "--account", "acme"]);
    assert_eq!(cli_usage["credits"], 2);

    // Delete.
    let deleted = admin(s, Method::DELETE, &path, None).await;
    assert_eq!(deleted.status, 200);
    admin(s, Method::GET, &path, None)
        .await
        .assert_error(404, "key_not_found");
    support::parse(s, Some(&new_token), url)
        .await
        .assert_error(401, "invalid_token");
    support::assert_books_balance(&s.db);
}
