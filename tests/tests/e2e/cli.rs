//! The operator CLI against a real database file and real components.

use mediaparse_tests::service::cli;
use serde_json::Value;

#[test]
fn keys_create_prints_the_token_once_and_lists_only_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let (code, out) = cli(
        &db,
        &[
            "keys",
            "create",
            "--name",
            "ci",
            "--platforms",
            "tiktok,youtube",
            "--expires",
            "2099-12-31",
            "--json",
        ],
    )
    .unwrap();
    assert_eq!(code, 0, "{out}");
    let created: Value = serde_json::from_str(out.trim()).unwrap();
    let token = created["token"].as_str().unwrap();
    assert!(token.starts_with("mp_live_") && token.len() > 40);
    assert!(created["id"].as_str().unwrap().starts_with("key_"));
    let (_, listed) = cli(&db, &["keys", "list", "--json"]).unwrap();
    assert!(!listed.contains(token), "listing never shows the token");
    let keys: Value = serde_json::from_str(listed.trim()).unwrap();
    assert_eq!(
        keys[0]["platforms"],
        serde_json::json!(["tiktok", "youtube"])
    );
    assert_eq!(keys[0]["expiresOn"], "2099-12-31");
    let (code, _) = cli(
        &db,
        &["keys", "create", "--name", "bad", "--platforms", "myspace"],
    )
    .unwrap();
    assert_ne!(code, 0);
    let (code, _) = cli(
        &db,
        &["keys", "create", "--name", "bad", "--expires", "tomorrow"],
    )
    .unwrap();
    assert_ne!(code, 0);
}

#[test]
fn detect_answers_with_the_target_or_the_error_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let (code, out) = cli(
        &db,
        &[
            "detect",
            "https://www.tiktok.com/@scout2015/video/6718335390845095173",
            "--json",
        ],
    )
    .unwrap();
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["platform"], "tiktok");
    assert_eq!(v["id"], "6718335390845095173");
    let (code, out) = cli(&db, &["detect", "https://example.com/nothing", "--json"]).unwrap();
    assert_eq!(code, 2);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["code"], "302");
}
