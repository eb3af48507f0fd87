//! The usage page: filter by key, platform and date range; totals; the
//! latest charges; the same rows as CSV. Reads through `operator::usage`,
//! the admin API's and `GET /api/v1/account`'s function.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{Markup, html};
use serde::Deserialize;

use super::super::admin_keys::UsageQuery;
use super::super::envelope::internal;
use super::super::state::AppState;
use super::customer::{known_platforms, operator_call};
use super::layout::{Flash, Nav, page, respond, time};
use super::session::Customer;
use mediaparse_operator::{self as operator, KeyView, OperatorError, UsageView};
use mediaparse_store::{Store, UsageFilter};

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/console/usage", get(usage))
        .route("/console/usage.csv", get(csv))
}

/// Rows on the page; the CSV has every row of the filter up to [`CSV_ROWS`].
const PAGE_ROWS: usize = 100;
const CSV_ROWS: usize = 100_000;

#[derive(Deserialize, Default, Clone)]
pub struct Filter {
    #[serde(default)]
    key: String,
    #[serde(default)]
    platform: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

impl Filter {
    fn query_string(&self) -> String {
        url::form_urlencoded::Serializer::new(String::new())
            .append_pair("key", &self.key)
            .append_pair("platform", &self.platform)
            .append_pair("from", &self.from)
            .append_pair("to", &self.to)
            .finish()
    }
}

fn some(v: &str) -> Option<String> {
    Some(v.trim().to_string()).filter(|v| !v.is_empty())
}

/// The account's usage filter from the page's form (an error: the message to show).
fn filter_of(c: &Customer, f: &Filter, entries: usize) -> Result<UsageFilter, String> {
    let mut filter = UsageQuery {
        account: Some(c.user.account_id.clone()),
        key: some(&f.key),
        platform: some(&f.platform),
        from: some(&f.from),
        to: some(&f.to),
        entries: None,
    }
    .filter()
    .map_err(|e| e.msg)?;
    filter.entries = entries;
    Ok(filter)
}

async fn read(
    state: &AppState,
    c: &Customer,
    f: &Filter,
    entries: usize,
) -> Result<Result<UsageView, String>, Response> {
    let filter = match filter_of(c, f, entries) {
        Ok(f) => f,
        Err(m) => return Ok(Err(m)),
    };
    let known = known_platforms(state);
    match operator_call(state, async move |s, _| {
        operator::usage(s, &filter, &known).await
    })
    .await
    {
        Ok(v) => Ok(Ok(v)),
        Err(OperatorError::Invalid(m)) => Ok(Err(m)),
        Err(e) => Err(internal(e).into_response()),
    }
}

/// What the page shows: the account's keys (for the filter and names) and
/// the usage of the filter, or why the filter was refused. One store read
/// after the other.
struct PageData {
    keys: Vec<KeyView>,
    view: Result<UsageView, String>,
}

async fn page_data(
    store: &Store,
    account: &str,
    filter: Result<UsageFilter, String>,
    known: &[String],
    now: i64,
) -> Result<PageData, OperatorError> {
    let keys = operator::list_keys(store, Some(account), now).await?;
    let view = match filter {
        Ok(f) => Ok(operator::usage(store, &f, known).await),
        Err(m) => Err(m),
    };
    let view = match view {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(OperatorError::Invalid(m))) | Err(m) => Err(m),
        Ok(Err(e)) => return Err(e),
    };
    Ok(PageData { keys, view })
}

async fn usage(
    State(state): State<Arc<AppState>>,
    c: Customer,
    q: Result<Query<Filter>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let f = q.map(|Query(f)| f).unwrap_or_default();
    let account = c.user.account_id.clone();
    let filter = filter_of(&c, &f, PAGE_ROWS);
    let known = known_platforms(&state);
    let data = {
        let known = known.clone();
        operator_call(&state, async move |s, now| {
            page_data(s, &account, filter, &known, now).await
        })
        .await
    };
    let data = match data {
        Ok(d) => d,
        Err(e) => return internal(e).into_response(),
    };
    let (flash, status) = match &data.view {
        Ok(_) => (Flash::None, StatusCode::OK),
        Err(m) => (Flash::Error(m.clone()), StatusCode::BAD_REQUEST),
    };
    let body = usage_body(&f, &data, &known);
    respond(
        status,
        page("Usage", Nav::Customer, &c.session.csrf, &flash, body),
    )
}

fn usage_body(f: &Filter, data: &PageData, known: &[String]) -> Markup {
    let keys = &data.keys;
    let names: HashMap<&str, &str> = keys
        .iter()
        .map(|k| (k.id.as_str(), k.name.as_str()))
        .collect();
    let key_name = |id: &str| {
        names
            .get(id)
            .map_or_else(|| format!("{id} (deleted)"), |n| n.to_string())
    };
    html! {
        form method="get" action="/console/usage" {
            label for="f-key" { "Key" }
            select #f-key name="key" {
                option value="" { "All keys" }
                @for k in keys { option value=(k.id) selected[f.key == k.id] { (k.name) } }
            }
            label for="f-platform" { "Platform" }
            select #f-platform name="platform" {
                option value="" { "All platforms" }
                @for p in known { option value=(p) selected[&f.platform == p] { (p) } }
            }
            label for="f-from" { "From (UTC day)" }
            input #f-from type="date" name="from" value=(f.from);
            label for="f-to" { "To (UTC day, included)" }
            input #f-to type="date" name="to" value=(f.to);
            div {
                button type="submit" { "Show" }
                a href=(format!("/console/usage.csv?{}", f.query_string())) download="usage.csv" { "Download CSV" }
            }
        }
        @if let Ok(v) = &data.view {
            h2 { "Totals" }
            p { strong { (v.usage.requests) } " charged parses · " strong { (v.usage.credits) } " credits" }
            @if !v.usage.by_platform.is_empty() {
                div.scroll { table {
                    thead { tr { th { "Platform" } th { "Parses" } th { "Credits" } } }
                    tbody { @for g in &v.usage.by_platform { tr { td { (g.name) } td { (g.requests) } td { (g.credits) } } } }
                } }
            }
            h2 { "Charges" }
            @if v.usage.requests as usize > PAGE_ROWS { p.muted { "The latest " (PAGE_ROWS) " are shown; the CSV has them all." } }
            div.scroll { table {
                thead { tr { th { "Time (UTC)" } th { "Platform" } th { "Key" } th { "Credits" } th { "Request id" } } }
                tbody {
                    @for e in &v.usage.entries {
                        tr { td { (time(e.time)) } td { (e.platform) } td { (key_name(&e.key)) } td { (e.credits) } td { code { (e.request_id) } } }
                    }
                    @if v.usage.entries.is_empty() { tr { td colspan="5" { "No charges match." } } }
                }
            } }
        }
    }
}

/// A CSV field, quoted when it must be.
fn field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

async fn csv(
    State(state): State<Arc<AppState>>,
    c: Customer,
    q: Result<Query<Filter>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let f = q.map(|Query(f)| f).unwrap_or_default();
    let view = match read(&state, &c, &f, CSV_ROWS).await {
        Ok(Ok(v)) => v,
        Ok(Err(m)) => return (StatusCode::BAD_REQUEST, m).into_response(),
        Err(r) => return r,
    };
    let mut out = String::from("time,platform,key,credits,request_id\n");
    for e in &view.usage.entries {
        let _ = writeln!(
            out,
            "{},{},{},{},{}",
            mediaparse_operator::rfc3339(e.time),
            field(&e.platform),
            field(&e.key),
            e.credits,
            field(&e.request_id)
        );
    }
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"usage.csv\"",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        out,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use mediaparse_store::KeyRecord;

    const ROWS: i64 = 10_000;
    const DAY: i64 = 86_400;

    /// The bench's account: 10,000 charges over 30 days, 3 keys, 4 platforms
    /// (ledger and its daily aggregates written in one transaction).
    fn seeded(now: i64) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).unwrap();
        for k in 0..3 {
            let key = KeyRecord {
                id: format!("key_{k}"),
                account_id: "bench".into(),
                name: format!("key {k}"),
                token_prefix: "mp_live_x".into(),
                expires_on: None,
                platforms: None,
                created_at: now - 40 * DAY,
                rotated_at: None,
                rate_limit_per_minute: None,
                delivery: None,
            };
            store.insert_key(&key, format!("t{k}").as_bytes()).unwrap();
        }
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        let tx = conn.transaction().unwrap();
        let platforms = ["tiktok", "youtube", "instagram", "twitter"];
        for i in 0..ROWS {
            tx.execute(
                "INSERT INTO ledger (account_id, key_id, platform, credits, request_id, created_at)
                 VALUES ('bench', ?1, ?2, 1, ?3, ?4)",
                rusqlite::params![
                    format!("key_{}", i % 3),
                    platforms[(i % 4) as usize],
                    format!("req_{i}"),
                    now - i * 30 * DAY / ROWS
                ],
            )
            .unwrap();
        }
        tx.execute_batch(
            "INSERT INTO ledger_daily (account_id, day, key_id, platform, requests, credits)
             SELECT account_id, created_at / 86400, key_id, platform, COUNT(*), SUM(credits)
             FROM ledger GROUP BY account_id, created_at / 86400, key_id, platform;",
        )
        .unwrap();
        tx.commit().unwrap();
        (dir, store)
    }

    fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
        (at(0.5), at(0.95))
    }

    /// Where the usage page's server time goes with 10,000 ledger rows:
    /// printed, not asserted (speed targets are the bench's). Run with
    /// `cargo test -p mediaparse-http usage_page_cost -- --nocapture`.
    #[test]
    fn usage_page_cost_with_ten_thousand_ledger_rows() {
        let now = 1_790_000_000;
        let (_dir, store) = seeded(now);
        let known: Vec<String> = ["instagram", "tiktok", "twitter", "youtube"]
            .map(String::from)
            .to_vec();
        let filters = [
            ("no filter", Filter::default()),
            (
                "key + platform + days",
                Filter {
                    key: "key_1".into(),
                    platform: "tiktok".into(),
                    from: "2026-08-01".into(),
                    to: "2026-09-20".into(),
                },
            ),
        ];
        for (what, f) in filters {
            let filter = |entries| {
                let mut q = UsageQuery {
                    account: Some("bench".into()),
                    key: some(&f.key),
                    platform: some(&f.platform),
                    from: some(&f.from),
                    to: some(&f.to),
                    entries: None,
                }
                .filter()
                .map_err(|e| e.msg);
                if let Ok(q) = &mut q {
                    q.entries = entries;
                }
                q
            };
            let (mut reads, mut renders) = (Vec::new(), Vec::new());
            let mut html_len = 0;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            for _ in 0..100 {
                let started = Instant::now();
                let data = runtime
                    .block_on(page_data(&store, "bench", filter(PAGE_ROWS), &known, now))
                    .unwrap();
                reads.push(started.elapsed());
                let started = Instant::now();
                html_len = usage_body(&f, &data, &known).into_string().len();
                renders.push(started.elapsed());
                let usage = &data.view.as_ref().unwrap().usage;
                assert_eq!(usage.entries.len(), PAGE_ROWS.min(usage.requests as usize));
                if what == "no filter" {
                    assert_eq!((usage.requests, usage.credits), (ROWS, ROWS));
                }
            }
            let (r50, r95) = percentiles(reads);
            let (h50, h95) = percentiles(renders);
            eprintln!(
                "usage page, {what}: store reads p50 {r50:.2} ms p95 {r95:.2} ms; \
                 render p50 {h50:.2} ms p95 {h95:.2} ms ({html_len} bytes)"
            );
        }
    }
}
