//! One ledger rule for every door: a charge's ledger id is minted by the
//! server, so no client header can make a parse pass as already charged.
//! Every door that charges (REST common and platform, MCP `parse_media`,
//! the console playground, idempotent replays) is run by two accounts with
//! repeated and borrowed `X-Request-Id` and `Idempotency-Key` values, the
//! ledger id of an earlier charged parse among them. Per account, the
//! credits taken from the balance, the ledger's credits and the charges the
//! answers that carried media showed must be one number. Real binary, real
//! SQLite, the recorded TikTok posts behind the fake upstream.

use std::collections::BTreeMap;

use mediaparse_tests::service::Service;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::accounts::support::{self, create_key};
use crate::console::support::{Browser, between, invite};

const GRANTED: i64 = 100;

/// One answer of a door: whose, whether it carried media, the charge it
/// showed, and whether it said it was a replay (its charge is the first
/// answer's, already counted).
#[derive(Debug)]
struct Shown {
    account: &'static str,
    door: String,
    media: bool,
    charged: i64,
    replayed: bool,
    /// Credits the account's balance lost across this answer.
    taken: i64,
}

struct Doors<'a> {
    service: &'a Service,
    store: mediaparse::store::Store,
    shown: Vec<Shown>,
    /// Every client-chosen `X-Request-Id` sent.
    client_ids: Vec<String>,
}

impl Doors<'_> {
    fn balance(&self, account: &str) -> i64 {
        self.store.balance(account).unwrap()
    }

    async fn rest(
        &mut self,
        account: &'static str,
        token: &str,
        path: &str,
        url: &str,
        headers: &[(&str, &str)],
    ) -> support::Answer {
        let mut req = reqwest::Client::new()
            .post(self.service.url(path))
            .bearer_auth(token)
            .json(&json!({ "url": url }));
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("x-request-id") {
                self.client_ids.push(value.to_string());
            }
            req = req.header(*name, *value);
        }
        let before = self.balance(account);
        let answer = support::send(req).await;
        let data = &answer.body["data"];
        let media = answer.status == 200 && data.as_object().is_some_and(|d| !d.is_empty());
        let replayed = answer
            .headers
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        self.shown.push(Shown {
            account,
            door: format!("REST {path} {headers:?}"),
            media,
            charged: answer.charged(),
            replayed,
            taken: before - self.balance(account),
        });
        answer
    }

    /// `parse_media` over MCP in `session`, with extra HTTP headers; a
    /// repeat of an earlier idempotency key is `replay`.
    async fn mcp(
        &mut self,
        account: &'static str,
        token: &str,
        session: &str,
        arguments: Value,
        headers: &[(&str, &str)],
        replay: bool,
    ) -> Value {
        let mut req = reqwest::Client::new()
            .post(self.service.url("/mcp"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18")
            .body(
                json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "parse_media", "arguments": arguments}})
                .to_string(),
            );
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("x-request-id") {
                self.client_ids.push(value.to_string());
            }
            req = req.header(*name, *value);
        }
        let before = self.balance(account);
        let text = req.send().await.unwrap().text().await.unwrap();
        let answer = sse_or_json(&text);
        let result = &answer["result"];
        let media = result["isError"] != true && result["structuredContent"].is_object();
        self.shown.push(Shown {
            account,
            door: format!("MCP {arguments} {headers:?}"),
            media,
            charged: result["_meta"]["creditsCharged"].as_i64().unwrap_or(0),
            replayed: replay,
            taken: before - self.balance(account),
        });
        answer
    }

    /// A playground parse by `browser` (its headers as set), read off the page.
    async fn playground(
        &mut self,
        account: &'static str,
        browser: &mut Browser,
        key_id: &str,
        url: &str,
        endpoint: &str,
    ) -> String {
        let before = self.balance(account);
        let (status, page) = browser
            .post(
                "/console/playground",
                &[
                    ("link", url),
                    ("key", key_id),
                    ("endpoint", endpoint),
                    ("delivery", "direct"),
                ],
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let status_line = between(&page, "role=\"status\">", "</p>");
        let shown = between(&status_line, "<strong>", " credit");
        let media = status_line.contains("HTTP 200")
            && (page.contains("<h2>Images (") || page.contains("<h2>Videos ("));
        self.shown.push(Shown {
            account,
            door: format!("playground {endpoint:?}"),
            media,
            charged: shown.trim().parse().unwrap_or_else(|_| panic!("{shown:?}")),
            replayed: false,
            taken: before - self.balance(account),
        });
        page
    }
}

fn sse_or_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or(Value::Null)
    })
}

pub(crate) async fn mcp_session(service: &Service, token: &str) -> String {
    let post = |body: Value, session: Option<&str>| {
        let mut req = reqwest::Client::new()
            .post(service.url("/mcp"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(s) = session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-06-18");
        }
        req.send()
    };
    let opened = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        None,
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    opened.text().await.unwrap();
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    session
}

#[tokio::test]
async fn every_door_charges_exactly_whatever_ids_the_client_sends() {
    let env = support::start(&[]).await;
    let service = &env.service;
    let urls = support::tiktok_urls();
    for account in ["acme", "beta"] {
        service.add_credits(account, GRANTED).unwrap();
    }
    let (acme_key, acme) = create_key(service, "acme", &["--rate-limit", "off"]);
    let (beta_key, beta) = create_key(service, "beta", &["--rate-limit", "off"]);
    let mut ann = Browser::new(service);
    ann.set_password(
        &invite(service, "acme", "ann@example.com").await,
        "a long enough password",
    )
    .await;
    let mut bob = Browser::new(service);
    bob.set_password(
        &invite(service, "beta", "bob@example.com").await,
        "a long enough password",
    )
    .await;
    let mut doors = Doors {
        service,
        store: mediaparse::store::Store::open(&service.db).unwrap(),
        shown: Vec::new(),
        client_ids: Vec::new(),
    };
    let same = [("x-request-id", "same-client-id")];

    // An earlier charged REST parse without a client id: its ledger id is
    // the server's X-Request-Id, which anyone who saw the answer may borrow.
    let earlier = doors
        .rest("acme", &acme, "/api/v1/parse", &urls[0], &[])
        .await;
    assert_eq!(
        (earlier.status, earlier.charged()),
        (200, 1),
        "{}",
        earlier.body
    );
    let charged_id = earlier.request_id();
    let borrowed = [("x-request-id", charged_id.as_str())];

    // The playground: the earlier parse's id first, then one id repeated.
    ann.set_header("x-request-id", &charged_id);
    doors.client_ids.push(charged_id.clone());
    doors
        .playground("acme", &mut ann, &acme_key, &urls[0], "")
        .await;
    ann.set_header("x-request-id", "same-client-id");
    for endpoint in ["", "tiktok", ""] {
        doors
            .playground("acme", &mut ann, &acme_key, &urls[1], endpoint)
            .await;
    }
    // Another account's playground under the same ids.
    for id in [charged_id.as_str(), "same-client-id"] {
        bob.set_header("x-request-id", id);
        doors.client_ids.push(id.to_string());
        doors
            .playground("beta", &mut bob, &beta_key, &urls[0], "")
            .await;
    }

    // REST, both endpoints, both accounts, repeated and borrowed ids.
    for (account, token) in [("acme", &acme), ("beta", &beta)] {
        for path in ["/api/v1/parse", "/api/v1/platforms/tiktok/parse"] {
            for headers in [&same[..], &same[..], &borrowed[..]] {
                doors.rest(account, token, path, &urls[1], headers).await;
            }
        }
    }
    // Idempotency keys: a repeat replays; the same key under another
    // account's key is that key's own request; with a borrowed request id.
    for (account, token) in [("acme", &acme), ("beta", &beta), ("acme", &acme)] {
        doors
            .rest(
                account,
                token,
                "/api/v1/parse",
                &urls[0],
                &[("idempotency-key", "order-1"), same[0]],
            )
            .await;
    }
    doors
        .rest(
            "beta",
            &beta,
            "/api/v1/parse",
            &urls[1],
            &[("idempotency-key", "order-2"), borrowed[0]],
        )
        .await;

    // MCP, both accounts, the same headers; an idempotency key repeated.
    for (account, token) in [("acme", &acme), ("beta", &beta)] {
        let session = mcp_session(service, token).await;
        for headers in [&same[..], &same[..], &borrowed[..]] {
            doors
                .mcp(
                    account,
                    token,
                    &session,
                    json!({"url": urls[0]}),
                    headers,
                    false,
                )
                .await;
        }
        for replay in [false, true] {
            doors
                .mcp(
                    account,
                    token,
                    &session,
                    json!({"url": urls[1], "idempotencyKey": "mcp-1"}),
                    &same,
                    replay,
                )
                .await;
        }
    }

    // The books, per account.
    let store = mediaparse::store::Store::open(&service.db).unwrap();
    // Per account and door: (answers with media shown charged, Σ shown, Σ taken).
    let mut per_door: BTreeMap<(&str, &str), (usize, i64, i64)> = BTreeMap::new();
    for s in &doors.shown {
        let door = s.door.split(' ').next().unwrap_or("");
        let entry = per_door.entry((s.account, door)).or_default();
        if s.media && !s.replayed {
            entry.0 += 1;
            entry.1 += s.charged;
        }
        entry.2 += s.taken;
    }
    eprintln!("per account and door (media answers, Σ shown, Σ taken): {per_door:?}");
    for s in &doors.shown {
        let shown = if s.media && !s.replayed { s.charged } else { 0 };
        assert_eq!(s.taken, shown, "{}: taken vs shown ({s:?})", s.door);
    }
    let mut figures = BTreeMap::new();
    for account in ["acme", "beta"] {
        let answers: Vec<&Shown> = doors
            .shown
            .iter()
            .filter(|s| s.account == account)
            .collect();
        for s in &answers {
            if s.media && !s.replayed {
                assert_eq!(
                    s.charged, 1,
                    "{}: media shown at a price other than 1: {s:?}",
                    s.door
                );
            }
        }
        let shown: i64 = answers
            .iter()
            .filter(|s| s.media && !s.replayed)
            .map(|s| s.charged)
            .sum();
        let taken = GRANTED - store.balance(account).unwrap();
        let ledger = store.ledger_sum(Some(account)).unwrap();
        let media = answers.iter().filter(|s| s.media).count();
        figures.insert(account, (answers.len(), media, shown, taken, ledger));
        assert_eq!(
            (taken, ledger),
            (shown, shown),
            "{account}: balance taken, ledger credits, charges shown over answers with media \
             ({media} of {} answers)",
            answers.len()
        );
    }
    eprintln!("per account (answers, with media, Σ shown, Σ taken, Σ ledger): {figures:?}");
    // No ledger id is a client's.
    let usage = store
        .usage(&mediaparse::store::UsageFilter {
            entries: 10_000,
            ..Default::default()
        })
        .unwrap();
    for entry in &usage.entries {
        let id = &entry.request_id;
        assert!(id.starts_with("req_") && id.len() == 36, "{id}");
        assert!(
            !doors.client_ids.iter().any(|c| c == id) || *id == charged_id,
            "a client's id became a ledger id: {id}"
        );
    }
    let ids: std::collections::HashSet<_> = usage.entries.iter().map(|e| &e.request_id).collect();
    assert_eq!(ids.len(), usage.entries.len(), "one ledger row per id");
    support::assert_books_balance(&service.db);
}
