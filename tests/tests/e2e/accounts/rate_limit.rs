//! Per-key rate limits: the service default (`MEDIAPARSE_RATE_LIMIT`), a
//! key's own limit, `off`; `429 rate_limited` with `Retry-After`, checked
//! after authentication, charging nothing and fetching nothing.

use super::support;

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after_and_free() {
    let env = support::start(&[("MEDIAPARSE_RATE_LIMIT", "2")]).await;
    let s = &env.service;
    let url = &support::tiktok_urls()[0];
    s.add_credits("default", 100).unwrap();
    let (default_id, default_key) = support::create_key(s, "default", &[]);
    let (_, own_limit) = support::create_key(s, "default", &["--rate-limit", "1"]);
    let (_, unlimited) = support::create_key(s, "default", &["--rate-limit", "off"]);

    for _ in 0..2 {
        assert_eq!(support::parse(s, Some(&default_key), url).await.status, 200);
    }
    env.upstream.clear_hits();
    let limited = support::parse(s, Some(&default_key), url).await;
    limited.assert_error(429, "rate_limited");
    assert_eq!(limited.charged(), 0);
    let retry: u64 = limited.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&retry),
        "2/min refills one request every 30 s: {retry}"
    );
    assert!(env.upstream.hits().is_empty(), "a 429 fetches nothing");
    // Authentication comes first: a bad token is still a 401.
    support::parse(s, Some("mp_live_wrong"), url)
        .await
        .assert_error(401, "invalid_token");
    // The customer's view has a bucket of its own: spent parses do not block it.
    assert_eq!(support::account_view(s, &default_key).await.status, 200);

    assert_eq!(support::parse(s, Some(&own_limit), url).await.status, 200);
    support::parse(s, Some(&own_limit), url)
        .await
        .assert_error(429, "rate_limited");
    for _ in 0..5 {
        assert_eq!(support::parse(s, Some(&unlimited), url).await.status, 200);
    }

    // Raising a key's limit applies to its next request.
    support::cli_json(s, &["keys", "edit", &default_id, "--rate-limit", "5"]);
    assert_eq!(support::parse(s, Some(&default_key), url).await.status, 200);

    let store = mediaparse::store::Store::open(&s.db).unwrap();
    assert_eq!(store.ledger_sum(None).unwrap(), 2 + 1 + 5 + 1);
    assert_eq!(store.balance("default").unwrap(), 100 - 9);
}
