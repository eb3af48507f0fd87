//! `POST /api/v1/batch` and the MCP tool `parse_batch`: up to 50 parses in
//! one request, each its own parse with its own ledger row and price,
//! credits set aside in item order before any runs. Real binary, real
//! SQLite, every recorded fixture behind the fake upstream; each answer is
//! checked against docs/openapi.json.

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::contract;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::accounts::support::assert_books_balance;

const TIKTOK_PHOTO: &str = "https://www.tiktok.com/@lina.travels/photo/7349984207157387783";
const YOUTUBE: &str = "https://youtu.be/it3OtbTxQk0?si=Q2x7uU3n";
const THREADS_TEXT_ONLY: &str = "https://www.threads.net/@natgeo/post/C8CTu0iswgv?xmt=AQGzR4b";
const UNSUPPORTED: &str = "https://example.com/not-a-post";

fn tiktok_video() -> String {
    Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/video_post"))
        .expect("fixture case")
        .input
}

async fn demo() -> (FakeUpstream, Service) {
    let mut cases = Vec::new();
    for (_, dir) in paths::fixture_dirs() {
        cases.extend(Case::load_all(&dir).expect("fixtures load"));
    }
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .expect("service starts");
    (upstream, service)
}

struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    fn charged(&self) -> i64 {
        self.header("x-credits-charged").parse().unwrap_or(-1)
    }

    fn items(&self) -> &Vec<Value> {
        self.body["data"]["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no items: {}", self.body))
    }
}

async fn batch(service: &Service, token: &str, body: Value, headers: &[(&str, &str)]) -> Answer {
    let mut req = reqwest::Client::new()
        .post(service.url("/api/v1/batch"))
        .bearer_auth(token)
        .json(&body);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let (status, headers, body) = contract::read("POST", req.send().await.unwrap()).await;
    Answer {
        status,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    }
}

fn item_code(item: &Value) -> (i64, &str) {
    (
        item["status"].as_i64().unwrap_or(-1),
        item["code"].as_str().unwrap_or(""),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_across_platforms_sets_credits_aside_in_order_and_keeps_exact_books() {
    let (_upstream, service) = demo().await;
    // TikTok 1 + Threads 2 (held, then given back: no media) + YouTube 3.
    service.add_credits("default", 6).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let video = tiktok_video();
    let answer = batch(
        &service,
        &token,
        json!({"items": [
            {"url": TIKTOK_PHOTO},
            {"link": THREADS_TEXT_ONLY},
            {"url": UNSUPPORTED},
            {"url": YOUTUBE},
            {"url": video},
            {"url": YOUTUBE, "platform": "youtube"},
            {"url": TIKTOK_PHOTO, "platform": "nope"},
        ]}),
        &[],
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let items = answer.items();
    assert_eq!(items.len(), 7);
    // In request order, each as its single parse answers.
    assert_eq!(items[0]["status"], 200, "{}", items[0]);
    assert_eq!(items[0]["data"]["platform"], "tiktok");
    assert_eq!(item_code(&items[1]), (200, "304"), "{}", items[1]);
    assert_eq!(item_code(&items[2]), (400, "302"), "{}", items[2]);
    assert_eq!(items[3]["data"]["platform"], "youtube", "{}", items[3]);
    // Everything was set aside before any item ran: 6 − 1 − 2 − 3 = 0 left,
    // so the last two priced items are refused even though the Threads
    // item gave its 2 back later.
    assert_eq!(
        item_code(&items[4]),
        (402, "insufficient_credits"),
        "{}",
        items[4]
    );
    assert_eq!(
        item_code(&items[5]),
        (402, "insufficient_credits"),
        "{}",
        items[5]
    );
    assert_eq!(
        item_code(&items[6]),
        (404, "unknown_platform"),
        "{}",
        items[6]
    );
    assert_eq!(answer.charged(), 4);
    assert!(
        answer.header("ratelimit").is_empty(),
        "an unlimited key has no limit headers"
    );
    let accounts = assert_books_balance(&service.db);
    let default = accounts.iter().find(|a| a.id == "default").unwrap();
    assert_eq!(
        (default.balance, default.spent, default.held),
        (2, 4, 0),
        "{default:?}"
    );
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.ledger_count(Some("default")).unwrap(), 2);

    // A key that may not parse TikTok: that item alone is refused.
    service.add_credits("default", 10).unwrap();
    let limited = service
        .create_key(&["--rate-limit", "off", "--platforms", "youtube"])
        .unwrap();
    let answer = batch(
        &service,
        &limited,
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE, "platform": "youtube"}]}),
        &[],
    )
    .await;
    let items = answer.items();
    assert_eq!(
        item_code(&items[0]),
        (403, "platform_not_allowed"),
        "{}",
        items[0]
    );
    assert_eq!(
        items[1]["data"]["media"]["platform"], "youtube",
        "{}",
        items[1]
    );
    assert!(items[1]["data"]["platformData"].is_object());
    assert_eq!(answer.charged(), 3);
    let accounts = assert_books_balance(&service.db);
    let default = accounts.iter().find(|a| a.id == "default").unwrap();
    assert_eq!(
        (default.balance, default.spent, default.held),
        (9, 7, 0),
        "{default:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_covers_the_whole_batch() {
    let (_upstream, service) = demo().await;
    service.add_credits("default", 20).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let body = json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE}, {"url": UNSUPPORTED}]});
    let first = batch(
        &service,
        &token,
        body.clone(),
        &[("idempotency-key", "b-1")],
    )
    .await;
    assert_eq!((first.status, first.charged()), (200, 4), "{}", first.body);
    assert_eq!(first.header("idempotent-replayed"), "");
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.balance("default").unwrap(), 16);
    for _ in 0..2 {
        let again = batch(
            &service,
            &token,
            body.clone(),
            &[("idempotency-key", "b-1")],
        )
        .await;
        assert_eq!(again.status, 200);
        assert_eq!(again.body, first.body, "a replay answers the same batch");
        assert_eq!(again.header("idempotent-replayed"), "true");
        assert_eq!(again.charged(), 4, "a replay says what the batch cost");
        assert_eq!(store.balance("default").unwrap(), 16, "and charges nothing");
    }
    // The same key with another batch is a conflict; nothing runs.
    let other = json!({"items": [{"url": TIKTOK_PHOTO}]});
    let conflict = batch(&service, &token, other, &[("idempotency-key", "b-1")]).await;
    assert_eq!(
        (conflict.status, conflict.body["code"].as_str()),
        (422, Some("idempotency_conflict")),
        "{}",
        conflict.body
    );
    assert_eq!(conflict.charged(), 0);
    assert_eq!(store.ledger_count(Some("default")).unwrap(), 2);
    assert_books_balance(&service.db);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_counts_items_and_refuses_a_batch_before_any_item_runs() {
    let (upstream, service) = demo().await;
    service.add_credits("default", 20).unwrap();
    let token = service.create_key(&["--rate-limit", "5"]).unwrap();
    let four = json!({"items": [{"url": TIKTOK_PHOTO}, {"url": UNSUPPORTED}, {"url": UNSUPPORTED}, {"url": UNSUPPORTED}]});
    let first = batch(&service, &token, four.clone(), &[]).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("ratelimit-policy"), r#""parse";q=5;w=60"#);
    assert!(
        first.header("ratelimit").starts_with(r#""parse";r=1;"#),
        "four of five taken: {}",
        first.header("ratelimit")
    );
    let hits = upstream.hits().len();
    // Four more do not fit in what is left (a refill takes 12 s each).
    let refused = batch(&service, &token, four, &[]).await;
    assert_eq!(
        (refused.status, refused.body["code"].as_str()),
        (429, Some("rate_limited")),
        "{}",
        refused.body
    );
    assert!(
        refused
            .header("retry-after")
            .parse::<u64>()
            .is_ok_and(|s| s >= 1)
    );
    assert!(refused.header("ratelimit").starts_with(r#""parse";r=0;"#));
    // Six never fit in a limit of five.
    let six: Vec<Value> = (0..6).map(|_| json!({"url": TIKTOK_PHOTO})).collect();
    let too_many = batch(&service, &token, json!({ "items": six }), &[]).await;
    assert_eq!(too_many.status, 429, "{}", too_many.body);
    assert_eq!(
        upstream.hits().len(),
        hits,
        "no refused item reached the upstream"
    );
    assert_eq!(
        mediaparse::store::Store::open(&service.db)
            .unwrap()
            .balance("default")
            .unwrap(),
        19
    );
    // The refused batches took nothing from the limit: one single parse still fits.
    let single = reqwest::Client::new()
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": UNSUPPORTED}))
        .send()
        .await
        .unwrap();
    assert_eq!(single.status().as_u16(), 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_no_items_or_more_than_fifty_is_refused() {
    let (_upstream, service) = demo().await;
    service.add_credits("default", 5).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let fifty_one: Vec<Value> = (0..51).map(|_| json!({"url": TIKTOK_PHOTO})).collect();
    for items in [json!([]), json!(fifty_one)] {
        let answer = batch(&service, &token, json!({ "items": items }), &[]).await;
        assert_eq!(
            (answer.status, answer.body["code"].as_str()),
            (400, Some("invalid_batch_size")),
            "{}",
            answer.body
        );
        assert_eq!(answer.charged(), 0);
    }
    for bad in [
        json!({}),
        json!({"items": "x"}),
        json!({"items": [{"url": TIKTOK_PHOTO}], "extra": 1}),
        json!({"items": [{"url": TIKTOK_PHOTO}, {"nope": 1}]}),
        json!({"items": [{"url": TIKTOK_PHOTO, "platform": 3}]}),
    ] {
        let answer = batch(&service, &token, bad.clone(), &[]).await;
        assert_eq!(
            (answer.status, answer.body["code"].as_str()),
            (400, Some("invalid_request")),
            "{bad}: {}",
            answer.body
        );
    }
    assert_eq!(
        mediaparse::store::Store::open(&service.db)
            .unwrap()
            .balance("default")
            .unwrap(),
        5
    );
}

/// One MCP `tools/call` in a fresh session.
pub(crate) async fn mcp_call(
    service: &Service,
    token: &str,
    name: &str,
    arguments: Value,
) -> Value {
    let session = crate::ledger_doors::mcp_session(service, token).await;
    let text = reqwest::Client::new()
        .post(service.url("/mcp"))
        .bearer_auth(token)
        .header("mcp-session-id", session)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_tool_parse_batch_answers_and_charges_as_rest_does() {
    let (_upstream, service) = demo().await;
    service.add_credits("default", 4).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let answer = mcp_call(
        &service,
        &token,
        "parse_batch",
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE, "platform": "youtube"}, {"url": TIKTOK_PHOTO}]}),
    )
    .await;
    let result = &answer["result"];
    assert_ne!(result["isError"], true, "{answer}");
    let items = result["structuredContent"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(items[0]["data"]["platform"], "tiktok");
    assert_eq!(items[1]["data"]["media"]["platform"], "youtube");
    assert_eq!(item_code(&items[2]), (402, "insufficient_credits"));
    assert_eq!(result["_meta"]["creditsCharged"], 4);
    let accounts = assert_books_balance(&service.db);
    let default = accounts.iter().find(|a| a.id == "default").unwrap();
    assert_eq!((default.balance, default.spent), (0, 4));
    // A size outside 1–50 is a tool error with the REST code.
    let empty = mcp_call(&service, &token, "parse_batch", json!({"items": []})).await;
    assert_eq!(empty["result"]["isError"], true, "{empty}");
    assert_eq!(
        empty["result"]["structuredContent"]["code"],
        "invalid_batch_size"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credits_set_aside_by_a_process_that_died_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mediaparse.db");
    // What a service killed mid-batch leaves: credits out of the balance,
    // held for items that will never settle them, long past their expiry.
    {
        let store = mediaparse::store::Store::open(&db).unwrap();
        store.add_credits("default", 10, 0).unwrap();
        let now = mediaparse::core::clock::unix_now_s();
        let holds = [
            mediaparse::store::HoldRequest {
                id: "hold_dead_0".into(),
                credits: 3,
            },
            mediaparse::store::HoldRequest {
                id: "hold_dead_1".into(),
                credits: 1,
            },
        ];
        let reserved = store
            .reserve_credits_async("default", &holds, now - 1, now - 600)
            .await
            .unwrap();
        assert!(
            reserved
                .iter()
                .all(|r| *r == mediaparse::store::Reserved::Held)
        );
        assert_eq!(store.balance("default").unwrap(), 6);
        assert_books_balance(&db);
    }
    let service = Service::start(ServiceOptions {
        db: Some(db.clone()),
        ..Default::default()
    })
    .await
    .unwrap();
    // The sweeper gives them back at start.
    let store = mediaparse::store::Store::open(&db).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while store.held_credits(Some("default")).unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "expired holds were not given back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(store.balance("default").unwrap(), 10);
    let accounts = assert_books_balance(&service.db);
    assert_eq!(accounts.iter().find(|a| a.id == "default").unwrap().held, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_on_two_hosts_of_one_postgres_never_overdraw_and_answer_in_item_order() {
    let url = tokio::task::spawn_blocking(mediaparse::store::test_pg::fresh_database)
        .await
        .unwrap();
    let photo = Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/photo_post"))
        .expect("fixture case");
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut hosts = Vec::new();
    for _ in 0..2 {
        hosts.push(
            Service::start(ServiceOptions {
                upstream: Some(upstream.base_url()),
                db: Some(std::path::PathBuf::from(&url)),
                extra_args: vec![
                    "--compiled-cache".into(),
                    cache.path().display().to_string(),
                ],
                ..Default::default()
            })
            .await
            .unwrap(),
        );
    }
    hosts[0].add_credits("default", 10).unwrap();
    let token = hosts[0].create_key(&["--rate-limit", "off"]).unwrap();
    // Four batches of five at once, two per host: 20 items, 10 credits.
    let items: Vec<Value> = (0..5).map(|_| json!({"url": photo.input})).collect();
    let sent = (0..4).map(|i| {
        let (host, token, body) = (&hosts[i % 2], token.clone(), json!({ "items": items }));
        async move { batch(host, &token, body, &[("cache-control", "no-cache")]).await }
    });
    let answers = futures::future::join_all(sent).await;
    let mut charged = 0;
    let mut media = 0;
    for answer in &answers {
        assert_eq!(answer.status, 200, "{}", answer.body);
        let statuses: Vec<i64> = answer.items().iter().map(|i| item_code(i).0).collect();
        // Set aside in item order: the items that fit come first.
        let fit = statuses.iter().take_while(|s| **s == 200).count();
        assert!(statuses[fit..].iter().all(|s| *s == 402), "{statuses:?}");
        media += fit as i64;
        charged += answer.charged();
    }
    assert_eq!((media, charged), (10, 10));
    let books = tokio::task::spawn_blocking(move || {
        let store =
            mediaparse::store::Store::connect(&mediaparse::store::DbLocation::Postgres(url))
                .unwrap();
        (
            store.ledger_sum(Some("default")).unwrap(),
            store.account("default").unwrap(),
        )
    })
    .await
    .unwrap();
    assert_eq!(books.0, 10);
    assert!(books.1.consistent(), "{:?}", books.1);
    assert_eq!((books.1.balance, books.1.held), (0, 0), "{:?}", books.1);
}
