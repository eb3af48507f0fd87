//! `/api/v1/jobs`: a batch run in the background, read back with `?wait`,
//! streamed as server-sent events, resumed after the service was killed,
//! announced by a signed `job.done` webhook, removed after its retention.
//! Real binary, real SQLite, every recorded fixture behind the fake upstream.

use std::path::Path;
use std::time::{Duration, Instant};

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::contract;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

use crate::accounts::support::assert_books_balance;
use crate::webhook_receiver::Receiver;

const TIKTOK_PHOTO: &str = "https://www.tiktok.com/@lina.travels/photo/7349984207157387783";
const YOUTUBE: &str = "https://youtu.be/it3OtbTxQk0?si=Q2x7uU3n";
const UNSUPPORTED: &str = "https://example.com/not-a-post";

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (_, dir) in paths::fixture_dirs() {
        cases.extend(Case::load_all(&dir).expect("fixtures load"));
    }
    cases
}

async fn start(upstream: &FakeUpstream, db: Option<&Path>, config: Option<&Path>) -> Service {
    Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        db: db.map(Path::to_path_buf),
        config: config.map(Path::to_path_buf),
        ..Default::default()
    })
    .await
    .expect("service starts")
}

/// Send, and check the answer against docs/openapi.json.
async fn send(
    method: &str,
    request: reqwest::RequestBuilder,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let resp = request.send().await.expect("request");
    let (status, headers, body) = contract::read(method, resp).await;
    (
        status,
        headers,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

async fn submit(
    service: &Service,
    token: &str,
    body: Value,
) -> (u16, reqwest::header::HeaderMap, Value) {
    send(
        "POST",
        reqwest::Client::new()
            .post(service.url("/api/v1/jobs"))
            .bearer_auth(token)
            .json(&body),
    )
    .await
}

async fn get_job(service: &Service, token: &str, id: &str, query: &str) -> (u16, Value) {
    let (status, _, body) = send(
        "GET",
        reqwest::Client::new()
            .get(service.url(&format!("/api/v1/jobs/{id}{query}")))
            .bearer_auth(token),
    )
    .await;
    (status, body)
}

/// Every event of the stream until it ends (at most 60 s): (event, data).
async fn events(service: &Service, token: &str, id: &str) -> Vec<(String, Value)> {
    let resp = reqwest::Client::new()
        .get(service.url(&format!("/api/v1/jobs/{id}/events")))
        .bearer_auth(token)
        .send()
        .await
        .expect("events");
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = tokio::time::timeout(Duration::from_secs(60), resp.text())
        .await
        .expect("the stream ends once the job is done")
        .expect("stream text");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut event = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(e) = line.strip_prefix("event: ") {
                event = Some(e.to_string());
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
        if let Some(event) = event {
            out.push((event, serde_json::from_str(&data).expect("JSON data")));
        }
    }
    out
}

fn code(item: &Value) -> (i64, &str) {
    (
        item["status"].as_i64().unwrap_or(-1),
        item["code"].as_str().unwrap_or(""),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_answers_as_a_batch_through_wait_and_events_and_only_to_its_account() {
    let cases = cases();
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    // The YouTube item takes a second at the upstream: `?wait` has to wait.
    let youtube = cases
        .iter()
        .find(|c| c.input == YOUTUBE)
        .expect("the youtube case");
    upstream.set_delay(&youtube.exchanges[0].request.url, Duration::from_secs(1));
    let service = start(&upstream, None, None).await;
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let other = service.create_key(&["--account", "other"]).unwrap();
    let items = json!([{"url": TIKTOK_PHOTO}, {"url": UNSUPPORTED}, {"url": YOUTUBE, "platform": "youtube"}]);

    let (status, headers, body) = submit(&service, &token, json!({"items": items})).await;
    assert_eq!(status, 202, "{body}");
    let id = body["data"]["id"].as_str().expect("job id").to_string();
    assert!(id.starts_with("job_"), "{id}");
    assert!(["queued", "running", "done"].contains(&body["data"]["state"].as_str().unwrap()));
    assert_eq!(headers["location"], format!("/api/v1/jobs/{id}").as_str());

    // Held until done.
    let (status, done) = get_job(&service, &token, &id, "?wait=30").await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["state"], "done", "{done}");
    assert_eq!(done["data"]["id"], id.as_str());
    let job_items = done["data"]["items"].as_array().expect("items").clone();
    assert_eq!(job_items.len(), 3);
    // The same items as a batch answers them.
    let batch: Value = reqwest::Client::new()
        .post(service.url("/api/v1/batch"))
        .bearer_auth(&token)
        .json(&json!({"items": items}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let batch_items = batch["data"]["items"].as_array().expect("batch items");
    for (job_item, batch_item) in job_items.iter().zip(batch_items) {
        assert_eq!(
            code(job_item),
            code(batch_item),
            "{job_item} vs {batch_item}"
        );
        assert_eq!(job_item["data"], batch_item["data"]);
    }
    assert_eq!(job_items[0]["data"]["platform"], "tiktok");
    assert_eq!(code(&job_items[1]), (400, "302"));
    // The platform shape, as asked for.
    assert_eq!(job_items[2]["status"], 200, "{}", job_items[2]);
    assert!(job_items[2]["data"].is_object());
    assert!(
        job_items[2]["data"].get("platform").is_none(),
        "{}",
        job_items[2]
    );

    // A late client of the event stream gets every item, then `done`.
    let got = events(&service, &token, &id).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let mut indices: Vec<i64> = got[..3]
        .iter()
        .map(|(e, d)| {
            assert_eq!(e, "item");
            let i = d["index"].as_i64().unwrap();
            assert_eq!(d["item"], job_items[i as usize]);
            i
        })
        .collect();
    indices.sort();
    assert_eq!(indices, vec![0, 1, 2]);
    assert_eq!(got[3].0, "done");
    assert_eq!(got[3].1["id"], id.as_str());

    // A live client: the stream starts before the job is done and ends with it.
    let (_, _, second) = submit(
        &service,
        &token,
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": UNSUPPORTED}]}),
    )
    .await;
    let second = second["data"]["id"].as_str().unwrap().to_string();
    let live = events(&service, &token, &second).await;
    assert_eq!(
        live.iter().filter(|(e, _)| e == "item").count(),
        2,
        "{live:?}"
    );
    assert_eq!(live.last().unwrap().0, "done");

    // Another account sees no such job.
    let (status, body) = get_job(&service, &other, &id, "").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("job_not_found")),
        "{body}"
    );
    let resp = reqwest::Client::new()
        .get(service.url(&format!("/api/v1/jobs/{id}/events")))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);

    // Bad input is refused.
    for query in ["?wait=0", "?wait=31", "?wait=x", "?other=1"] {
        let (status, body) = get_job(&service, &token, &id, query).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid_request")),
            "{query}: {body}"
        );
    }
    for url in [
        "ftp://example.com/hook",
        "http://example.com/hook",
        "not a url",
    ] {
        let (status, _, body) = submit(
            &service,
            &token,
            json!({"items": [{"url": TIKTOK_PHOTO}], "callback_url": url}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("invalid_callback_url")),
            "{url}: {body}"
        );
    }
    let (status, _, body) = submit(&service, &token, json!({"items": []})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_batch_size")),
        "{body}"
    );
    assert_books_balance(&service.db);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_mid_run_resumes_after_a_restart_and_charges_each_item_once() {
    let cases = cases();
    let youtube = cases
        .iter()
        .find(|c| c.input == YOUTUBE)
        .expect("the youtube case");
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    // The YouTube item hangs at the upstream until the service is killed.
    let slow = youtube.exchanges[0].request.url.clone();
    upstream.set_delay(&slow, Duration::from_secs(600));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mediaparse.db");
    let mut service = start(&upstream, Some(&db), None).await;
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let (status, _, body) = submit(
        &service,
        &token,
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE}, {"url": UNSUPPORTED}]}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_string();

    // Items 0 and 2 finished and kept, item 1 in flight at the upstream.
    let store = mediaparse::store::Store::open(&db).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.job_answers(&id).unwrap().len() < 2 || upstream.delayed_arrivals().is_empty() {
        assert!(Instant::now() < deadline, "the job did not get under way");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (_, running) = get_job(&service, &token, &id, "").await;
    assert_eq!(running["data"]["state"], "running", "{running}");
    assert!(
        store.held_credits(Some("default")).unwrap() > 0,
        "the YouTube item's credits are held"
    );
    service.kill().await;
    upstream.set_delay(&slow, Duration::ZERO);
    upstream.release_delayed();

    let service = start(&upstream, Some(&db), None).await;
    let (status, done) = get_job(&service, &token, &id, "?wait=30").await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["state"], "done", "{done}");
    let items = done["data"]["items"].as_array().unwrap();
    assert_eq!(items[0]["data"]["platform"], "tiktok", "{}", items[0]);
    assert_eq!(items[1]["data"]["platform"], "youtube", "{}", items[1]);
    assert_eq!(code(&items[2]), (400, "302"));

    // Exact books: each charged item once under its job-derived id, nothing held.
    let usage = store
        .usage(&mediaparse::store::UsageFilter {
            entries: 10_000,
            ..Default::default()
        })
        .unwrap();
    let mut ids: Vec<&str> = usage
        .entries
        .iter()
        .map(|e| e.request_id.as_str())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![format!("{id}_0"), format!("{id}_1")],
        "{:?}",
        usage.entries
    );
    let spent: i64 = usage.entries.iter().map(|e| e.credits).sum();
    assert_eq!(store.held_credits(Some("default")).unwrap(), 0);
    assert_eq!(store.balance("default").unwrap(), 10 - spent);
    let accounts = assert_books_balance(&service.db);
    assert_eq!(accounts.iter().find(|a| a.id == "default").unwrap().held, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_job_is_posted_signed_to_its_callback_retried_and_removed_after_its_retention() {
    let cases = cases();
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[webhooks]\nfirst_retry_ms = 200\nmax_retry_interval_ms = 400\npoll_ms = 50\n\n[jobs]\nretention_secs = 3\n",
    )
    .unwrap();
    let service = start(&upstream, None, Some(&config)).await;
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let (code_, out) = service.cli(&["keys", "list", "--json"]).unwrap();
    assert_eq!(code_, 0, "{out}");
    let key_id = serde_json::from_str::<Value>(out.trim()).unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code_, out) = service
        .cli(&["keys", "webhook-secret", &key_id, "--json"])
        .unwrap();
    assert_eq!(code_, 0, "{out}");
    let secret = serde_json::from_str::<Value>(out.trim()).unwrap()["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let receiver = Receiver::start(&[500, 500]).await;

    let posted = Instant::now();
    let (status, _, body) = submit(
        &service,
        &token,
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": UNSUPPORTED}], "callback_url": receiver.url}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_string();
    let posts = receiver.wait_for(3).await;
    eprintln!(
        "job latency, POST /api/v1/jobs to the first webhook POST: {:.1} ms",
        (posts[0].at - posted).as_secs_f64() * 1000.0
    );
    for post in &posts {
        assert!(post.verifies_with(&secret), "signature of {post:?}");
        assert_eq!(post.id, posts[0].id, "every attempt is the one event");
        let event: Value = serde_json::from_slice(&post.body).unwrap();
        assert_eq!(event["type"], "job.done");
        assert_eq!(event["data"]["id"], id.as_str());
        assert_eq!(event["data"]["state"], "done");
        let items = event["data"]["items"].as_array().unwrap();
        assert_eq!(items[0]["data"]["platform"], "tiktok", "{event}");
        assert_eq!(code(&items[1]), (400, "302"));
    }
    // The webhook carries the items the job answers.
    let (_, done) = get_job(&service, &token, &id, "").await;
    let event: Value = serde_json::from_slice(&posts[0].body).unwrap();
    assert_eq!(done["data"]["items"], event["data"]["items"]);

    // Past its retention the sweeper removes the job.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = get_job(&service, &token, &id, "").await;
        if status == 404 {
            assert_eq!(body["code"], "job_not_found");
            break;
        }
        assert!(Instant::now() < deadline, "the job was not removed: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Delivered on the third attempt: no fourth.
    assert_eq!(receiver.received().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submission_repeated_under_one_idempotency_key_queues_one_job() {
    let cases = cases();
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    let service = start(&upstream, None, None).await;
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let post = |key: Option<&str>, body: Value| {
        let mut request = reqwest::Client::new()
            .post(service.url("/api/v1/jobs"))
            .bearer_auth(&token)
            .json(&body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        send("POST", request)
    };
    let body = json!({"items": [{"url": TIKTOK_PHOTO}]});

    let (status, first_headers, first) = post(Some("job-once"), body.clone()).await;
    assert_eq!(status, 202, "{first}");
    assert!(first_headers.get("idempotent-replayed").is_none());
    let id = first["data"]["id"].as_str().expect("job id").to_string();
    let (status, done) = get_job(&service, &token, &id, "?wait=30").await;
    assert_eq!(
        (status, done["data"]["state"].as_str()),
        (200, Some("done"))
    );
    let spent = assert_books_balance(&service.db)
        .iter()
        .find(|a| a.id == "default")
        .unwrap()
        .spent;
    assert!(spent > 0, "the job charged its item");

    // The retry answers the same job, marked replayed, and queues nothing.
    let (status, headers, again) = post(Some("job-once"), body.clone()).await;
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["data"]["id"], id.as_str(), "{again}");
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(headers["location"], format!("/api/v1/jobs/{id}").as_str());
    // Another body under the key is refused; without a key, a new job.
    let (status, _, conflict) = post(
        Some("job-once"),
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": TIKTOK_PHOTO}]}),
    )
    .await;
    assert_eq!(
        (status, conflict["code"].as_str()),
        (422, Some("idempotency_conflict")),
        "{conflict}"
    );
    let (status, _, fresh) = post(None, body.clone()).await;
    assert_eq!(status, 202, "{fresh}");
    let fresh = fresh["data"]["id"].as_str().unwrap().to_string();
    assert_ne!(fresh, id);
    let (_, done) = get_job(&service, &token, &fresh, "?wait=30").await;
    assert_eq!(done["data"]["state"], "done");
    let accounts = assert_books_balance(&service.db);
    let default = accounts.iter().find(|a| a.id == "default").unwrap();
    assert_eq!(default.spent, 2 * spent, "two jobs ran, not three");

    // The MCP tool under its `idempotencyKey` argument: one job too.
    let args = json!({"items": [{"url": UNSUPPORTED}], "idempotencyKey": "mcp-job-once"});
    let first = crate::batch::mcp_call(&service, &token, "start_job", args.clone()).await;
    let again = crate::batch::mcp_call(&service, &token, "start_job", args).await;
    let first_id = &first["result"]["structuredContent"]["id"];
    assert!(first_id.is_string(), "{first}");
    assert_eq!(
        &again["result"]["structuredContent"]["id"], first_id,
        "{again}"
    );
    assert_eq!(again["result"]["_meta"]["replayed"], true, "{again}");
    assert_ne!(first["result"]["_meta"]["replayed"], true, "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_job_tools_start_and_read_a_job_as_rest_does() {
    let cases = cases();
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    let service = start(&upstream, None, None).await;
    service.add_credits("default", 4).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let other = service.create_key(&["--account", "other"]).unwrap();
    let started = crate::batch::mcp_call(
        &service,
        &token,
        "start_job",
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE, "platform": "youtube"}, {"url": TIKTOK_PHOTO}]}),
    )
    .await;
    let result = &started["result"];
    assert_ne!(result["isError"], true, "{started}");
    let id = result["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    assert!(id.starts_with("job_"));

    let got =
        crate::batch::mcp_call(&service, &token, "get_job", json!({"id": id, "wait": 30})).await;
    let data = &got["result"]["structuredContent"];
    assert_eq!(data["state"], "done", "{got}");
    let items = data["items"].as_array().unwrap();
    assert_eq!(items[0]["data"]["platform"], "tiktok");
    assert_eq!(items[1]["data"]["media"]["platform"], "youtube");
    assert_eq!(code(&items[2]), (402, "insufficient_credits"));
    // The same job over REST.
    let (_, rest) = get_job(&service, &token, &id, "").await;
    assert_eq!(&rest["data"]["items"], &data["items"]);
    let accounts = assert_books_balance(&service.db);
    let default = accounts.iter().find(|a| a.id == "default").unwrap();
    assert_eq!((default.balance, default.spent, default.held), (0, 4, 0));

    let theirs = crate::batch::mcp_call(&service, &other, "get_job", json!({"id": id})).await;
    assert_eq!(theirs["result"]["isError"], true, "{theirs}");
    assert_eq!(
        theirs["result"]["structuredContent"]["code"],
        "job_not_found"
    );
    let bad_wait =
        crate::batch::mcp_call(&service, &token, "get_job", json!({"id": id, "wait": 0})).await;
    assert_eq!(
        bad_wait["result"]["structuredContent"]["code"], "invalid_request",
        "{bad_wait}"
    );
    let bad_url = crate::batch::mcp_call(
        &service,
        &token,
        "start_job",
        json!({"items": [{"url": TIKTOK_PHOTO}], "callbackUrl": "http://example.com/x"}),
    )
    .await;
    assert_eq!(
        bad_url["result"]["structuredContent"]["code"], "invalid_callback_url",
        "{bad_url}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_another_host_takes_over_a_dead_hosts_job_once_its_lease_lapses() {
    let url = tokio::task::spawn_blocking(mediaparse::store::test_pg::fresh_database)
        .await
        .unwrap();
    let cases = cases();
    let youtube = cases
        .iter()
        .find(|c| c.input == YOUTUBE)
        .expect("the youtube case");
    let upstream = FakeUpstream::start(&cases).await.expect("fake upstream");
    let slow = youtube.exchanges[0].request.url.clone();
    upstream.set_delay(&slow, Duration::from_secs(600));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[jobs]\nlease_ms = 2000\npoll_ms = 100\n").unwrap();
    let host = |cache: &Path| ServiceOptions {
        upstream: Some(upstream.base_url()),
        db: Some(std::path::PathBuf::from(&url)),
        config: Some(config.clone()),
        extra_args: vec!["--compiled-cache".into(), cache.display().to_string()],
        ..Default::default()
    };
    let mut first = Service::start(host(dir.path())).await.expect("first host");
    first.add_credits("default", 10).unwrap();
    let token = first.create_key(&["--rate-limit", "off"]).unwrap();
    let (status, _, body) = submit(
        &first,
        &token,
        json!({"items": [{"url": TIKTOK_PHOTO}, {"url": YOUTUBE}, {"url": UNSUPPORTED}]}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_string();
    let store = {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            mediaparse::store::Store::connect(&mediaparse::store::DbLocation::Postgres(url))
                .unwrap()
        })
        .await
        .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let answers = |store: mediaparse::store::Store, id: String| async move {
        tokio::task::spawn_blocking(move || store.job_answers(&id).unwrap().len())
            .await
            .unwrap()
    };
    while answers(store.clone(), id.clone()).await < 2 || upstream.delayed_arrivals().is_empty() {
        assert!(Instant::now() < deadline, "the job did not get under way");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The second host starts while the first one holds the job's lease.
    let second = Service::start(host(dir.path())).await.expect("second host");
    first.kill().await;
    upstream.set_delay(&slow, Duration::ZERO);
    upstream.release_delayed();

    let (status, done) = get_job(&second, &token, &id, "?wait=30").await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["data"]["state"], "done", "{done}");
    let items = done["data"]["items"].as_array().unwrap();
    assert_eq!(items[0]["data"]["platform"], "tiktok", "{}", items[0]);
    assert_eq!(items[1]["data"]["platform"], "youtube", "{}", items[1]);
    assert_eq!(code(&items[2]), (400, "302"));
    let (usage, account) = tokio::task::spawn_blocking(move || {
        let usage = store
            .usage(&mediaparse::store::UsageFilter {
                entries: 10_000,
                ..Default::default()
            })
            .unwrap();
        (usage, store.account("default").unwrap())
    })
    .await
    .unwrap();
    let mut ids: Vec<&str> = usage
        .entries
        .iter()
        .map(|e| e.request_id.as_str())
        .collect();
    ids.sort();
    assert_eq!(ids, vec![format!("{id}_0"), format!("{id}_1")]);
    assert_eq!(account.held, 0, "{account:?}");
    assert!(account.consistent(), "{account:?}");
}
