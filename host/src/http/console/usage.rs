//! The usage page: filter by key, platform and date range; totals; the
//! latest charges; the same rows as CSV. Reads through `operator::usage`,
//! the admin API's and `GET /api/v1/account`'s function.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::html;
use serde::Deserialize;

use super::super::admin_keys::UsageQuery;
use super::super::envelope::internal;
use super::super::state::AppState;
use super::customer::{blocking, known_platforms};
use super::layout::{Flash, Nav, page, respond, time};
use super::session::Customer;
use crate::operator::{self, OperatorError, UsageView};

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

async fn read(
    state: &AppState,
    c: &Customer,
    f: &Filter,
    entries: usize,
) -> Result<Result<UsageView, String>, Response> {
    let filter = UsageQuery {
        account: Some(c.user.account_id.clone()),
        key: some(&f.key),
        platform: some(&f.platform),
        from: some(&f.from),
        to: some(&f.to),
        entries: None,
    }
    .filter();
    let mut filter = match filter {
        Ok(f) => f,
        Err(e) => return Ok(Err(e.msg)),
    };
    filter.entries = entries;
    let known = known_platforms(state);
    match blocking(state, move |s, _| operator::usage(s, &filter, &known)).await? {
        Ok(v) => Ok(Ok(v)),
        Err(OperatorError::Invalid(m)) => Ok(Err(m)),
        Err(e) => Err(internal(e).into_response()),
    }
}

async fn usage(
    State(state): State<Arc<AppState>>,
    c: Customer,
    q: Result<Query<Filter>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let f = q.map(|Query(f)| f).unwrap_or_default();
    let account = c.user.account_id.clone();
    let keys = match blocking(&state, move |s, now| {
        operator::list_keys(s, Some(&account), now)
    })
    .await
    {
        Ok(Ok(k)) => k,
        Ok(Err(e)) => return internal(e).into_response(),
        Err(r) => return r,
    };
    let (view, flash, status) = match read(&state, &c, &f, PAGE_ROWS).await {
        Ok(Ok(v)) => (Some(v), Flash::None, StatusCode::OK),
        Ok(Err(m)) => (None, Flash::Error(m), StatusCode::BAD_REQUEST),
        Err(r) => return r,
    };
    let known = known_platforms(&state);
    let key_name = |id: &str| {
        keys.iter()
            .find(|k| k.id == id)
            .map_or_else(|| format!("{id} (deleted)"), |k| k.name.clone())
    };
    let body = html! {
        form method="get" action="/console/usage" {
            label for="f-key" { "Key" }
            select #f-key name="key" {
                option value="" { "All keys" }
                @for k in &keys { option value=(k.id) selected[f.key == k.id] { (k.name) } }
            }
            label for="f-platform" { "Platform" }
            select #f-platform name="platform" {
                option value="" { "All platforms" }
                @for p in &known { option value=(p) selected[&f.platform == p] { (p) } }
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
        @if let Some(v) = &view {
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
    };
    respond(
        status,
        page("Usage", Nav::Customer, &c.session.csrf, &flash, body),
    )
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
            crate::operator::rfc3339(e.time),
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
