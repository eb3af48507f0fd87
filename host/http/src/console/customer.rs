//! Customer pages: the overview (balance, 30-day chart, recent parses),
//! keys (list, create, edit, reset, delete — through `operator::*`, the
//! admin API's own functions) and docs.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};

use super::super::envelope::internal;
use super::super::state::AppState;
use super::form::Form;
use super::layout::{Flash, Nav, csrf_field, page, refusal, respond, shown_once, swatch, time};
use super::session::{Customer, csrf_ok};
use mediaparse_auth as auth;
use mediaparse_operator::{self as operator, KeySpec, KeyView, OperatorError};
use mediaparse_store::{KeyEdit, Store};

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/console", get(overview))
        .route("/console/keys", get(keys).post(create_key))
        .route("/console/keys/{id}", get(key_page).post(edit_key))
        .route("/console/keys/{id}/reset", post(reset_key))
        .route("/console/keys/{id}/delete", post(delete_key))
        .route("/console/docs", get(docs))
}

/// Run an operator call (`operator::*`, the store's awaited calls) at the
/// auth clock, so a key's `status` agrees with what a parse would see.
pub async fn operator_call<T>(
    state: &AppState,
    f: impl AsyncFnOnce(&Store, i64) -> Result<T, OperatorError>,
) -> Result<T, OperatorError> {
    f(&state.services.store, state.auth_now()).await
}

/// The platform ids the service knows.
pub fn known_platforms(state: &AppState) -> Vec<String> {
    state
        .services
        .registry
        .known()
        .ids()
        .into_iter()
        .map(String::from)
        .collect()
}

pub(super) fn csrf_refused() -> Response {
    refusal(
        StatusCode::FORBIDDEN,
        "Request refused",
        "This form did not carry this session's CSRF token. Reload the page and try again.",
    )
}

/// Distinct colours for the chart, by platform order.
const COLOURS: &[&str] = &[
    "#0b5cad", "#d9730d", "#2b8a3e", "#ae3ec9", "#c92a2a", "#1098ad", "#5c940d", "#862e9c",
];

/// The last 30 days' credits as stacked bars, one per day, plain HTML/CSS.
fn chart(days: &[mediaparse_store::DailyCredits], today: i64) -> Markup {
    let platforms: Vec<&str> = {
        let mut p: Vec<&str> = days.iter().map(|d| d.platform.as_str()).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    let colour = |p: &str| {
        let i = platforms.iter().position(|x| *x == p).unwrap_or(0);
        COLOURS[i % COLOURS.len()]
    };
    let mut by_day: BTreeMap<i64, Vec<(&str, i64)>> = BTreeMap::new();
    for d in days {
        by_day
            .entry(d.day)
            .or_default()
            .push((&d.platform, d.credits));
    }
    let max = by_day
        .values()
        .map(|v| v.iter().map(|(_, c)| c).sum::<i64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let total: i64 = days.iter().map(|d| d.credits).sum();
    html! {
        figure {
            div.chart role="img" aria-label=(format!("Credits used per day over the last 30 days: {total} in all")) {
                @for day in (today - 29)..=today {
                    @let parts = by_day.get(&day).cloned().unwrap_or_default();
                    @let sum: i64 = parts.iter().map(|(_, c)| c).sum();
                    div.bar title=(format!("{}: {sum} credits", time(day * 86_400).get(..10).unwrap_or(""))) {
                        @for (p, c) in &parts {
                            span style=(format!("height:{:.2}rem;background:{}", *c as f64 * 9.0 / max as f64, colour(p))) {}
                        }
                    }
                }
            }
            figcaption.legend {
                @if platforms.is_empty() { span.muted { "No credits used in the last 30 days." } }
                @for p in &platforms { span { (swatch(colour(p))) (p) } }
                span.muted { (time((today - 29) * 86_400).get(..10).unwrap_or("")) " … today (UTC)" }
            }
        }
    }
}

async fn overview(State(state): State<Arc<AppState>>, c: Customer) -> Response {
    let account = c.user.account_id.clone();
    let loaded = operator_call(&state, async move |s, now| {
        let today = now.div_euclid(86_400);
        let balance = s.balance_async(&account).await?;
        let days = s
            .daily_credits_async(&account, (today - 29) * 86_400, (today + 1) * 86_400)
            .await?;
        let recent = s.recent_charges_async(&account, 10).await?;
        let keys = s.keys_of_account_async(&account).await?;
        Ok((balance, days, recent, keys, today))
    })
    .await;
    let (balance, days, recent, keys, today) = match loaded {
        Ok(v) => v,
        Err(e) => return internal(e).into_response(),
    };
    let key_name = |id: &str| {
        keys.iter()
            .find(|k| k.id == id)
            .map_or_else(|| format!("{id} (deleted)"), |k| k.name.clone())
    };
    let body = html! {
        p { "Account " code { (c.user.account_id) } " · signed in as " (c.user.email) }
        section aria-labelledby="balance" {
            h2 #balance { "Balance" }
            p.big { (balance) " credits" }
        }
        section aria-labelledby="chart" {
            h2 #chart { "Credits used, last 30 days" }
            (chart(&days, today))
        }
        section aria-labelledby="recent" {
            h2 #recent { "Recent parses" }
            p.muted { "Successful parses are charged; failures cost nothing and are not listed." }
            div.scroll { table {
                thead { tr { th { "Time (UTC)" } th { "Platform" } th { "Outcome" } th { "Credits" } th { "Key" } } }
                tbody {
                    @for e in &recent {
                        tr { td { (time(e.time)) } td { (e.platform) } td { "success" } td { (e.credits) } td { (key_name(&e.key)) } }
                    }
                    @if recent.is_empty() { tr { td colspan="5" { "No parses yet. Try one in the " a href="/console/playground" { "playground" } "." } } }
                }
            } }
        }
    };
    respond(
        StatusCode::OK,
        page(
            "Overview",
            Nav::Customer,
            &c.session.csrf,
            &Flash::None,
            body,
        ),
    )
}

fn platforms_text(key: &KeyView) -> String {
    match &key.platforms {
        serde_json::Value::Array(list) => list
            .iter()
            .filter_map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => "all".into(),
    }
}

/// The create / edit form's fields, filled from `key` when editing.
fn key_fields(known: &[String], key: Option<&KeyView>) -> Markup {
    let chosen: Vec<String> = match key.map(|k| &k.platforms) {
        Some(serde_json::Value::Array(list)) => list
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    let all = chosen.is_empty();
    html! {
        label for="name" { "Name" }
        input #name type="text" name="name" required maxlength="100" value=(key.map_or("", |k| k.name.as_str()));
        label for="expires" { "Expires after (last valid day, UTC; empty: never)" }
        input #expires type="date" name="expires" value=(key.and_then(|k| k.expires_on.as_deref()).unwrap_or(""));
        fieldset {
            legend { "Platforms" }
            label.check { input type="radio" name="scope" value="all" checked[all]; " All platforms" }
            label.check { input type="radio" name="scope" value="chosen" checked[!all]; " Only these:" }
            div {
                @for p in known {
                    label.check { input type="checkbox" name="platform" value=(p) checked[chosen.contains(p)]; " " (p) }
                }
            }
        }
    }
}

/// The platform choice of a key form.
fn form_platforms(form: &Form, known: &[String]) -> Result<Option<Vec<String>>, String> {
    if form.get("scope") != "chosen" {
        return Ok(None);
    }
    let chosen = form.all("platform");
    if chosen.is_empty() {
        return Err("choose at least one platform, or all platforms".into());
    }
    auth::parse_platforms(&chosen.join(","), known)
}

async fn keys_page(
    state: &AppState,
    c: &Customer,
    flash: Flash,
    issued: Option<Markup>,
    status: StatusCode,
) -> Response {
    let account = c.user.account_id.clone();
    let (keys, last_used) = match operator_call(state, async move |s, now| {
        Ok((
            operator::list_keys(s, Some(&account), now).await?,
            s.last_charged_use_async(&account).await?,
        ))
    })
    .await
    {
        Ok(k) => k,
        Err(e) => return internal(e).into_response(),
    };
    let known = known_platforms(state);
    let body = html! {
        @if let Some(issued) = issued { (issued) }
        div.scroll { table #keys {
            thead { tr { th { "Name" } th { "Token" } th { "Platforms" } th { "Expires" } th { "Created" } th { "Rotated" } th { "Last used*" } th { span.muted { "Actions" } } } }
            tbody {
                @for k in &keys {
                    tr {
                        td { (k.name) }
                        td { code { (k.token_prefix) "…" } }
                        td { (platforms_text(k)) }
                        td {
                            @match (&k.expires_on, k.status) {
                                (Some(d), "expired") => span.expired { "expired " (d) },
                                (Some(d), _) => (d),
                                (None, _) => "never",
                            }
                        }
                        td { (k.created_at.get(..10).unwrap_or("")) }
                        td { (k.rotated_at.as_deref().and_then(|r| r.get(..10)).unwrap_or("—")) }
                        td.last-used { @match last_used.get(&k.id) { Some(t) => (time(*t)), None => "never" } }
                        td { a href=(format!("/console/keys/{}", k.id)) aria-label=(format!("Edit key {}", k.name)) { "Edit" } }
                    }
                }
                @if keys.is_empty() { tr { td colspan="8" { "No keys yet: create one below." } } }
            }
        } }
        p.muted { "* Last used is the last charged parse (UTC), read from the ledger: parses that cost nothing (failures, no media) do not count. Expired keys stop working; edit the expiry or create a new key." }
        h2 { "Create a key" }
        form method="post" action="/console/keys" {
            (csrf_field(&c.session.csrf))
            (key_fields(&known, None))
            div { button type="submit" { "Create key" } }
        }
    };
    respond(
        status,
        page("Keys", Nav::Customer, &c.session.csrf, &flash, body),
    )
}

async fn keys(State(state): State<Arc<AppState>>, c: Customer) -> Response {
    keys_page(&state, &c, Flash::None, None, StatusCode::OK).await
}

async fn create_key(State(state): State<Arc<AppState>>, c: Customer, body: Bytes) -> Response {
    let form = Form::parse(&body);
    if !csrf_ok(&c.session, &form) {
        return csrf_refused();
    }
    let known = known_platforms(&state);
    let spec = auth::parse_expiry(form.get("expires")).and_then(|expires_on| {
        Ok(KeySpec {
            name: form.get("name").to_string(),
            account: c.user.account_id.clone(),
            expires_on,
            platforms: form_platforms(&form, &known)?,
            rate_limit_per_minute: None,
        })
    });
    let spec = match spec {
        Ok(s) => s,
        Err(m) => {
            return keys_page(&state, &c, Flash::Error(m), None, StatusCode::BAD_REQUEST).await;
        }
    };
    let max_keys = state.guards.max_keys_per_account;
    match operator_call(&state, async move |s, now| {
        operator::create_key_within(s, spec, max_keys, now).await
    })
    .await
    {
        Ok(issued) => {
            let shown = shown_once("new-token", &issued.token);
            let flash = Flash::Ok(format!("Key {} created.", issued.key.name));
            keys_page(&state, &c, flash, Some(shown), StatusCode::CREATED).await
        }
        Err(OperatorError::Invalid(m)) => {
            keys_page(&state, &c, Flash::Error(m), None, StatusCode::BAD_REQUEST).await
        }
        Err(OperatorError::KeyLimit(m)) => {
            keys_page(&state, &c, Flash::Error(m), None, StatusCode::CONFLICT).await
        }
        Err(e) => internal(e).into_response(),
    }
}

/// The key `id` if it belongs to the customer's account (else not found:
/// another account's key ids say nothing).
pub(super) async fn own_key(
    state: &AppState,
    c: &Customer,
    id: String,
) -> Result<KeyView, Response> {
    let account = c.user.account_id.clone();
    match operator_call(state, async move |s, now| {
        operator::get_key(s, &id, now).await
    })
    .await
    {
        Ok(k) if k.account == account => Ok(k),
        Ok(_) | Err(OperatorError::NotFound(..)) => Err(refusal(
            StatusCode::NOT_FOUND,
            "No such key",
            "This account has no such key.",
        )),
        Err(e) => Err(internal(e).into_response()),
    }
}

/// A form posted about one of the customer's keys: its CSRF token checked
/// and the key theirs; else the answer that says why.
pub(super) async fn posted_on_own_key(
    state: &AppState,
    c: &Customer,
    id: String,
    body: &Bytes,
) -> Result<(Form, KeyView), Response> {
    let form = Form::parse(body);
    if !csrf_ok(&c.session, &form) {
        return Err(csrf_refused());
    }
    Ok((form, own_key(state, c, id).await?))
}

/// A destructive change needs its confirmation box ticked: the page saying
/// so when it is not.
pub(super) fn unconfirmed(
    state: &AppState,
    c: &Customer,
    key: &KeyView,
    form: &Form,
    what: &str,
) -> Option<Response> {
    if form.get("confirm") == "yes" {
        return None;
    }
    Some(key_detail(
        state,
        c,
        key,
        Flash::Error(format!("Tick the confirmation to {what}.")),
        None,
        StatusCode::BAD_REQUEST,
    ))
}

pub(super) fn key_detail(
    state: &AppState,
    c: &Customer,
    key: &KeyView,
    flash: Flash,
    issued: Option<Markup>,
    status: StatusCode,
) -> Response {
    let known = known_platforms(state);
    let body = html! {
        @if let Some(issued) = issued { (issued) }
        p { "Token " code { (key.token_prefix) "…" } " · created " (key.created_at) }
        h2 { "Edit" }
        p.note { "Editing keeps the token: applications using it go on working." }
        form method="post" action=(format!("/console/keys/{}", key.id)) {
            (csrf_field(&c.session.csrf))
            (key_fields(&known, Some(key)))
            div { button type="submit" { "Save changes" } }
        }
        h2 { "Reset the token" }
        p { "A new token is shown once; the current one stops working at once." }
        form method="post" action=(format!("/console/keys/{}/reset", key.id)) {
            (csrf_field(&c.session.csrf))
            label.check { input type="checkbox" name="confirm" value="yes" required; " I understand the current token stops working" }
            div { button type="submit" { "Reset token" } }
        }
        h2 { "Webhooks" }
        p { "Webhooks of this key are signed with its webhook secret (Standard Webhooks: " code { "webhook-id" } ", " code { "webhook-timestamp" } ", " code { "webhook-signature" } "). A new secret is shown once and replaces the current one at once; a key without one has its webhooks refused." }
        form method="post" action=(format!("/console/keys/{}/webhook-secret", key.id)) {
            (csrf_field(&c.session.csrf))
            label.check { input type="checkbox" name="confirm" value="yes" required; " I understand webhooks are signed with the new secret only from now on" }
            div { button type="submit" { "New webhook secret" } }
        }
        p { a href=(format!("/console/keys/{}/webhooks", key.id)) { "Webhook deliveries of this key" } }
        h2 { "Delete" }
        form method="post" action=(format!("/console/keys/{}/delete", key.id)) {
            (csrf_field(&c.session.csrf))
            label.check { input type="checkbox" name="confirm" value="yes" required; " Delete this key for good" }
            div { button.danger type="submit" { "Delete key" } }
        }
        p { a href="/console/keys" { "Back to keys" } }
    };
    respond(
        status,
        page(
            &format!("Key {}", key.name),
            Nav::Customer,
            &c.session.csrf,
            &flash,
            body,
        ),
    )
}

async fn key_page(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
) -> Response {
    match own_key(&state, &c, id).await {
        Ok(key) => key_detail(&state, &c, &key, Flash::None, None, StatusCode::OK),
        Err(r) => r,
    }
}

async fn edit_key(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let (form, key) = match posted_on_own_key(&state, &c, id, &body).await {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    let known = known_platforms(&state);
    let edit = auth::parse_expiry(form.get("expires")).and_then(|expires_on| {
        Ok(KeyEdit {
            name: Some(form.get("name").to_string()),
            expires_on: Some(expires_on),
            platforms: Some(form_platforms(&form, &known)?),
            rate_limit_per_minute: None,
        })
    });
    let edit = match edit {
        Ok(e) => e,
        Err(m) => {
            return key_detail(
                &state,
                &c,
                &key,
                Flash::Error(m),
                None,
                StatusCode::BAD_REQUEST,
            );
        }
    };
    let id = key.id.clone();
    match operator_call(&state, async move |s, now| {
        operator::edit_key(s, &id, edit, now).await
    })
    .await
    {
        Ok(edited) => key_detail(
            &state,
            &c,
            &edited,
            Flash::Ok("Saved. The token is unchanged.".into()),
            None,
            StatusCode::OK,
        ),
        Err(OperatorError::Invalid(m)) => key_detail(
            &state,
            &c,
            &key,
            Flash::Error(m),
            None,
            StatusCode::BAD_REQUEST,
        ),
        Err(e) => internal(e).into_response(),
    }
}

async fn reset_key(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let (form, key) = match posted_on_own_key(&state, &c, id, &body).await {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    if let Some(refused) = unconfirmed(&state, &c, &key, &form, "reset the token") {
        return refused;
    }
    let id = key.id.clone();
    match operator_call(&state, async move |s, now| {
        operator::reset_key(s, &id, now).await
    })
    .await
    {
        Ok(issued) => {
            let shown = shown_once("new-token", &issued.token);
            key_detail(
                &state,
                &c,
                &issued.key,
                Flash::Ok("New token issued; the old one no longer works.".into()),
                Some(shown),
                StatusCode::OK,
            )
        }
        Err(e) => internal(e).into_response(),
    }
}

async fn delete_key(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let (form, key) = match posted_on_own_key(&state, &c, id, &body).await {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    if let Some(refused) = unconfirmed(&state, &c, &key, &form, "delete the key") {
        return refused;
    }
    let id = key.id.clone();
    match operator_call(&state, async move |s, now| {
        operator::delete_key(s, &id, now).await
    })
    .await
    {
        Ok(deleted) => {
            keys_page(
                &state,
                &c,
                Flash::Ok(format!("Key {} deleted.", deleted.name)),
                None,
                StatusCode::OK,
            )
            .await
        }
        Err(e) => internal(e).into_response(),
    }
}

async fn docs(State(state): State<Arc<AppState>>, c: Customer) -> Response {
    let account = c.user.account_id.clone();
    let keys = match operator_call(&state, async move |s, now| {
        operator::list_keys(s, Some(&account), now).await
    })
    .await
    {
        Ok(k) => k,
        Err(e) => return internal(e).into_response(),
    };
    let base = state.tunnel.public_base_url.clone();
    let prefix = keys.first().map_or_else(
        || format!("{}…", auth::TOKEN_PREFIX),
        |k| format!("{}…", k.token_prefix),
    );
    let curl_parse = format!(
        "curl -s {base}/api/v1/parse \\\n  -H 'Authorization: Bearer {prefix}' \\\n  -H 'Content-Type: application/json' \\\n  -d '{{\"url\": \"https://…\"}}'"
    );
    let curl_account = format!("curl -s {base}/api/v1/account -H 'Authorization: Bearer {prefix}'");
    let body = html! {
        p { "Reference: " a href="/docs" { "API documentation" } " · " a href="/openapi.json" { "OpenAPI document" } "." }
        p.muted { "Replace " code { (prefix) } " with your whole token (shown once when the key was created or reset)." }
        h2 { "Parse a link" }
        pre #curl-parse { (curl_parse) }
        button type="button" data-copy="curl-parse" { "Copy" }
        h2 { "Your balance and usage" }
        pre #curl-account { (curl_account) }
        button type="button" data-copy="curl-account" { "Copy" }
    };
    respond(
        StatusCode::OK,
        page("Docs", Nav::Customer, &c.session.csrf, &Flash::None, body),
    )
}
