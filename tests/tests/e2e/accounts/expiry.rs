//! Expiry edges over HTTP, with the service's hidden fixed auth clock: a key
//! that expires on a date works through the last second of that date (UTC)
//! and is `401 token_expired` from the first second after; editing the
//! expiration revives it. The same database is served at both instants.

use reqwest::Method;
use serde_json::json;

use super::support::{self, start_on};

const LAST_SECOND: &str = "2026-11-22T23:59:59Z";
const FIRST_SECOND_AFTER: &str = "2026-11-23T00:00:00Z";

#[tokio::test]
async fn valid_through_the_last_second_of_the_date_expired_from_the_first_after() {
    let url = &support::tiktok_urls()[0];
    let before = start_on(None, &[("MEDIAPARSE_FIXED_AUTH_CLOCK", LAST_SECOND)]).await;
    let s = &before.service;
    s.add_credits("default", 10).unwrap();
    let (id, token) = support::create_key(s, "default", &["--expires", "2026-11-22"]);
    let (_, day_before) = support::create_key(s, "default", &["--expires", "2026-11-21"]);
    let ok = support::parse(s, Some(&token), url).await;
    assert_eq!((ok.status, ok.charged()), (200, 1), "{}", ok.body);
    assert_eq!(support::account_view(s, &token).await.status, 200);
    support::parse(s, Some(&day_before), url)
        .await
        .assert_error(401, "token_expired");
    let listed = support::admin(s, Method::GET, &format!("/api/v1/admin/keys/{id}"), None).await;
    assert_eq!(listed.body["data"]["status"], "active");
    let db = s.db.clone();

    let after = start_on(
        Some(db),
        &[("MEDIAPARSE_FIXED_AUTH_CLOCK", FIRST_SECOND_AFTER)],
    )
    .await;
    let s2 = &after.service;
    let refused = support::parse(s2, Some(&token), url).await;
    refused.assert_error(401, "token_expired");
    assert_eq!(refused.charged(), 0);
    support::account_view(s2, &token)
        .await
        .assert_error(401, "token_expired");
    let listed = support::admin(s2, Method::GET, &format!("/api/v1/admin/keys/{id}"), None).await;
    assert_eq!(listed.body["data"]["status"], "expired");

    // Editing the expiration revives the same token.
    let edited = support::admin(
        s2,
        Method::PATCH,
        &format!("/api/v1/admin/keys/{id}"),
        Some(json!({"expiresOn": "2026-11-23"})),
    )
    .await;
    assert_eq!(edited.status, 200, "{}", edited.body);
    assert_eq!(edited.body["data"]["status"], "active");
    let revived = support::parse(s2, Some(&token), url).await;
    assert_eq!(
        (revived.status, revived.charged()),
        (200, 1),
        "{}",
        revived.body
    );

    let store = mediaparse::store::Store::open(&s2.db).unwrap();
    assert_eq!(store.ledger_sum(None).unwrap(), 2);
    assert_eq!(store.balance("default").unwrap(), 8);
    drop(before);
}
