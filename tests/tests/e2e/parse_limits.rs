//! The bounds of one parse (`host/core/src/limits.rs`, applied in
//! `host/parse/src/rounds.rs`): at most 16 requests in one round and at most
//! 8 rounds (guest steps), hence at most 8 × 16 requests in all. The test
//! guest's `fanout-{n}-{r}` mode asks for `n` requests in each of `r` rounds;
//! a parse over a bound answers `500 extractor_failed`, charges nothing, and
//! the fake upstream counts what reached it.

use mediaparse_tests::fake_upstream::{FakeUpstream, Route};

use crate::operations::{Running, extractors, start};

const PER_ROUND: usize = 16;
const ROUNDS: usize = 8;

/// Every URL the `fanout` mode can ask for, answered `200`.
async fn fanout_upstream() -> FakeUpstream {
    let mut routes = Vec::new();
    for round in 0..=ROUNDS + 1 {
        for i in 0..=PER_ROUND + 1 {
            routes.push(Route {
                method: "GET".into(),
                url: format!("https://api.mptest.example/fanout/{round}/{i}"),
                header_constraints: vec![],
                body_constraint: None,
                status: 200,
                headers: vec![mediaparse_sdk::Header::new("content-type", "text/plain")],
                body: format!("answer {round}/{i}").into_bytes(),
            });
        }
    }
    FakeUpstream::with_routes(routes)
        .await
        .expect("fake upstream")
}

/// Parse `fanout-{n}-{r}`; (status, code, credits charged, upstream arrivals).
async fn fanout(
    run: &Running,
    up: &FakeUpstream,
    n: usize,
    r: usize,
) -> (u16, String, Option<String>, usize) {
    up.clear_hits();
    let a = run.parse("tiktok", &format!("fanout-{n}-{r}")).await;
    assert!(up.misses().is_empty(), "{:?}", up.misses());
    let code = a.body["code"].as_str().unwrap_or_default().to_string();
    (a.status, code, a.credits, up.hits().len())
}

#[tokio::test]
async fn round_and_request_limits_stop_a_parse_without_charge() {
    let up = fanout_upstream().await;
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let run = start(dir.path(), &up.base_url(), None, None).await;
    let balance = run.balance();

    // At the bounds: 16 requests in each of 7 rounds, the 8th step finishes.
    let (status, _, credits, arrived) = fanout(&run, &up, PER_ROUND, ROUNDS - 1).await;
    assert_eq!(status, 200);
    assert_eq!(credits.as_deref(), Some("1"));
    assert_eq!(arrived, PER_ROUND * (ROUNDS - 1));
    let balance = balance - 1;
    assert_eq!(run.balance(), balance);

    // One request over the per-round limit: refused before any is sent.
    let over_round = fanout(&run, &up, PER_ROUND + 1, 1).await;
    assert_eq!(
        over_round,
        (500, "extractor_failed".into(), Some("0".into()), 0)
    );

    // One round over the limit (one request each): the 8 rounds' requests
    // went out, the 9th step never runs.
    let over_rounds = fanout(&run, &up, 1, ROUNDS + 1).await;
    assert_eq!(
        over_rounds,
        (500, "extractor_failed".into(), Some("0".into()), ROUNDS)
    );

    // Under the per-round limit every round, over the total: no more than
    // 8 × 16 requests reach the upstream.
    let over_total = fanout(&run, &up, PER_ROUND, ROUNDS + 1).await;
    assert_eq!(
        over_total,
        (
            500,
            "extractor_failed".into(),
            Some("0".into()),
            PER_ROUND * ROUNDS
        )
    );

    assert_eq!(run.balance(), balance, "failed parses charged nothing");
    let store = mediaparse::store::Store::open(&run.service.db).expect("store");
    assert_eq!(store.ledger_count(None).expect("ledger"), 1);
}
