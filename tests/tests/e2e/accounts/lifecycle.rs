//! Every auth failure code; reset, edit and delete semantics; the customer's
//! own view. Changes made by the CLI on the database file are seen by the
//! running service on the very next request.

use mediaparse_tests::service::{Service, ServiceOptions};
use reqwest::Method;
use serde_json::json;

use super::support::{self, ADMIN};

#[tokio::test]
async fn every_auth_failure_code_charges_nothing_and_fetches_nothing() {
    let env = support::start(&[]).await;
    let s = &env.service;
    let url = &support::tiktok_urls()[0];
    s.add_credits("default", 10).unwrap();
    let (_, good) = support::create_key(s, "default", &[]);

    support::parse(s, None, url)
        .await
        .assert_error(401, "missing_token");
    let empty = support::send(
        reqwest::Client::new()
            .post(s.url("/api/v1/parse"))
            .header("authorization", "Bearer ")
            .json(&json!({ "url": url })),
    )
    .await;
    empty.assert_error(401, "missing_token");
    let basic = support::send(
        reqwest::Client::new()
            .post(s.url("/api/v1/parse"))
            .header("authorization", format!("Basic {good}"))
            .json(&json!({ "url": url })),
    )
    .await;
    basic.assert_error(401, "invalid_token");
    support::parse(s, Some("mp_live_not-a-real-token"), url)
        .await
        .assert_error(401, "invalid_token");
    // The operator token never parses.
    support::parse(s, Some(ADMIN), url)
        .await
        .assert_error(401, "invalid_token");
    let (_, expired) = support::create_key(s, "default", &["--expires", "2020-01-31"]);
    support::parse(s, Some(&expired), url)
        .await
        .assert_error(401, "token_expired");
    let (_, limited) = support::create_key(s, "default", &["--platforms", "youtube,weibo"]);
    let refused = support::parse(s, Some(&limited), url).await;
    refused.assert_error(403, "platform_not_allowed");
    assert_eq!(refused.charged(), 0);
    let on_path = support::send(
        reqwest::Client::new()
            .post(s.url("/api/v1/platforms/tiktok/parse"))
            .bearer_auth(&limited)
            .json(&json!({ "url": url })),
    )
    .await;
    on_path.assert_error(403, "platform_not_allowed");

    // The customer view answers with the same codes.
    support::account_view(s, "mp_live_nope")
        .await
        .assert_error(401, "invalid_token");
    support::account_view(s, &expired)
        .await
        .assert_error(401, "token_expired");
    support::send(reqwest::Client::new().get(s.url("/api/v1/account")))
        .await
        .assert_error(401, "missing_token");

    // A customer token never opens the admin API.
    support::admin_as(s, None, Method::GET, "/api/v1/admin/keys", None)
        .await
        .assert_error(401, "missing_token");
    support::admin_as(s, Some(&good), Method::GET, "/api/v1/admin/keys", None)
        .await
        .assert_error(401, "invalid_token");

    assert!(env.upstream.hits().is_empty(), "{:?}", env.upstream.hits());
    let store = mediaparse::store::Store::open(&s.db).unwrap();
    assert_eq!(store.ledger_count(None).unwrap(), 0);
    assert_eq!(store.balance("default").unwrap(), 10);

    // Without an operator token the admin API does not exist.
    let extractors = support::tiktok_only();
    let no_admin = Service::start(ServiceOptions {
        extractors: Some(extractors),
        ..Default::default()
    })
    .await
    .unwrap();
    support::admin_as(
        &no_admin,
        Some(ADMIN),
        Method::GET,
        "/api/v1/admin/keys",
        None,
    )
    .await
    .assert_error(404, "not_found");
}

#[tokio::test]
async fn reset_edit_and_delete_apply_to_the_very_next_request() {
    let env = support::start(&[]).await;
    let s = &env.service;
    let url = &support::tiktok_urls()[0];
    s.add_credits("acme", 20).unwrap();
    let (id, token) = support::create_key(
        s,
        "acme",
        &["--platforms", "tiktok,youtube", "--expires", "2099-12-31"],
    );
    let first = support::parse(s, Some(&token), url).await;
    assert_eq!((first.status, first.charged()), (200, 1), "{}", first.body);

    // Reset: a new token, the old one refused at once, permissions kept.
    let reset = support::cli_json(s, &["keys", "reset", &id]);
    let new_token = reset["token"].as_str().unwrap().to_string();
    assert_ne!(new_token, token);
    assert_eq!(reset["platforms"], json!(["tiktok", "youtube"]));
    assert_eq!(reset["expiresOn"], "2099-12-31");
    assert!(new_token.starts_with(reset["tokenPrefix"].as_str().unwrap()));
    support::parse(s, Some(&token), url)
        .await
        .assert_error(401, "invalid_token");
    assert_eq!(support::parse(s, Some(&new_token), url).await.status, 200);

    // Edit: the token stays; permissions and expiry change at once.
    let edited = support::cli_json(s, &["keys", "edit", &id, "--platforms", "youtube"]);
    assert_eq!(edited["platforms"], json!(["youtube"]));
    assert!(edited.get("token").is_none(), "edit never shows a token");
    support::parse(s, Some(&new_token), url)
        .await
        .assert_error(403, "platform_not_allowed");
    support::cli_json(
        s,
        &[
            "keys",
            "edit",
            &id,
            "--platforms",
            "all",
            "--expires",
            "2020-01-01",
        ],
    );
    support::parse(s, Some(&new_token), url)
        .await
        .assert_error(401, "token_expired");
    let revived = support::cli_json(
        s,
        &[
            "keys",
            "edit",
            &id,
            "--expires",
            "never",
            "--name",
            "renamed",
        ],
    );
    assert_eq!(revived["expiresOn"], serde_json::Value::Null);
    assert_eq!(revived["name"], "renamed");
    assert_eq!(revived["platforms"], "all");
    assert_eq!(revived["status"], "active");
    assert_eq!(support::parse(s, Some(&new_token), url).await.status, 200);
    let (code, _) = s.cli(&["keys", "edit", &id]).unwrap();
    assert_ne!(code, 0, "an edit that changes nothing is refused");
    let (code, _) = s
        .cli(&["keys", "edit", "key_missing", "--name", "x"])
        .unwrap();
    assert_ne!(code, 0, "editing an unknown key fails");

    // The customer's view: balance and recent usage, free of charge.
    let view = support::account_view(s, &new_token).await;
    assert_eq!(view.status, 200, "{}", view.body);
    assert_eq!(view.charged(), 0);
    let data = &view.body["data"];
    assert_eq!(data["account"], "acme");
    assert_eq!(data["balance"], 17);
    assert_eq!(data["usage"]["requests"], 3);
    assert_eq!(data["usage"]["credits"], 3);
    assert_eq!(data["usage"]["entries"].as_array().unwrap().len(), 3);
    assert_eq!(data["key"]["id"], id.as_str());
    assert!(data["key"].get("token").is_none());
    assert_eq!(data["prices"]["youtube"], 3);
    let recent = &data["usage"]["entries"][0];
    assert_eq!(recent["platform"], "tiktok");
    assert_eq!(recent["key"], id.as_str());
    let again = support::account_view(s, &new_token).await;
    assert_eq!(again.body["data"]["balance"], 17, "viewing costs nothing");

    // Delete: the token stops; the key's usage stays readable.
    let deleted = support::cli_json(s, &["keys", "delete", &id]);
    assert_eq!(deleted["deleted"]["id"], id.as_str());
    support::parse(s, Some(&new_token), url)
        .await
        .assert_error(401, "invalid_token");
    let usage = support::cli_json(s, &["usage", "--key", &id]);
    assert_eq!(
        (usage["requests"].as_i64(), usage["credits"].as_i64()),
        (Some(3), Some(3))
    );
    let listed = support::cli_json(s, &["keys", "list", "--account", "acme"]);
    assert_eq!(listed, json!([]));

    let accounts = support::assert_books_balance(&s.db);
    let acme = accounts.iter().find(|a| a.id == "acme").unwrap();
    assert_eq!((acme.balance, acme.spent, acme.granted), (17, 3, 20));
}

#[test]
fn credits_and_usage_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--json");
        let (code, out) = mediaparse_tests::service::cli(&db, &all).unwrap();
        (
            code,
            serde_json::from_str::<serde_json::Value>(out.trim()).unwrap_or_default(),
        )
    };
    let (code, created) = run(&["accounts", "create", "acme"]);
    assert_eq!(code, 0);
    assert_eq!(created["balance"], 0);
    assert_ne!(run(&["accounts", "create", "acme"]).0, 0, "exists already");
    assert_ne!(run(&["accounts", "create", "no spaces"]).0, 0);
    let (_, added) = run(&["credits", "add", "--account", "acme", "100"]);
    assert_eq!(
        (added["previous"].as_i64(), added["balance"].as_i64()),
        (Some(0), Some(100))
    );
    let (_, set) = run(&["credits", "set", "--account", "acme", "40"]);
    assert_eq!(
        (set["change"].as_i64(), set["balance"].as_i64()),
        (Some(-60), Some(40))
    );
    assert_ne!(
        run(&["credits", "set", "--account", "acme", "--", "-1"]).0,
        0
    );
    let (_, shown) = run(&["credits", "show", "--account", "acme"]);
    assert_eq!(
        (
            shown["balance"].as_i64(),
            shown["granted"].as_i64(),
            shown["spent"].as_i64()
        ),
        (Some(40), Some(40), Some(0))
    );
    let (_, all) = run(&["credits", "show"]);
    assert_eq!(all.as_array().map(Vec::len), Some(1));
    let (code, usage) = run(&[
        "usage",
        "--account",
        "acme",
        "--platform",
        "tiktok",
        "--from",
        "2026-01-01",
        "--to",
        "2026-12-31",
    ]);
    assert_eq!(code, 0);
    assert_eq!(usage["requests"], 0);
    assert_eq!(usage["from"], "2026-01-01T00:00:00Z");
    assert_eq!(usage["until"], "2027-01-01T00:00:00Z");
    assert_ne!(run(&["usage", "--platform", "myspace"]).0, 0);
    assert_ne!(
        run(&["usage", "--from", "2026-02-01", "--to", "2026-01-01"]).0,
        0
    );
}
