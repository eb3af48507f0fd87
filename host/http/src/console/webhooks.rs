//! Webhook pages: a customer creates or rotates a key's webhook secret
//! (shown once) and reads that key's deliveries; the operator reads every
//! account's deliveries. The same functions as the admin API
//! (`operator::rotate_webhook_secret`, `operator::webhook_deliveries`).

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
use super::customer::{key_detail, operator_call, own_key, posted_on_own_key, unconfirmed};
use super::layout::{Flash, Nav, page, respond};
use super::session::{Customer, Operator};
use mediaparse_operator::{self as operator, DeliveryView};
use mediaparse_store::DeliveryFilter;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/console/keys/{id}/webhook-secret", post(rotate_secret))
        .route("/console/keys/{id}/webhooks", get(key_deliveries))
        .route("/console/admin/webhooks", get(all_deliveries))
}

/// Deliveries listed on one page.
const SHOWN: usize = 100;

/// A new secret, shown once.
fn shown_secret(secret: &str) -> Markup {
    html! {
        div.note.ok role="status" {
            p { strong { "Your webhook secret — shown only this once. " } "Copy it now; verify the " code { "webhook-signature" } " of each delivery with it." }
            code.token id="webhook-secret" { (secret) }
            button type="button" data-copy="webhook-secret" { "Copy secret" }
        }
    }
}

async fn rotate_secret(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let (form, key) = match posted_on_own_key(&state, &c, id, &body).await {
        Ok(posted) => posted,
        Err(r) => return r,
    };
    if let Some(refused) = unconfirmed(&state, &c, &key, &form, "replace the webhook secret") {
        return refused;
    }
    let id = key.id.clone();
    match operator_call(&state, async move |s, now| {
        operator::rotate_webhook_secret(s, &id, now).await
    })
    .await
    {
        Ok(issued) => {
            let note = if issued.rotated {
                "New webhook secret; the old one no longer signs anything."
            } else {
                "Webhook secret created."
            };
            key_detail(
                &state,
                &c,
                &key,
                Flash::Ok(note.into()),
                Some(shown_secret(&issued.secret)),
                StatusCode::OK,
            )
        }
        Err(e) => internal(e).into_response(),
    }
}

/// The deliveries as a table, newest first, each attempt on its own line.
fn table(deliveries: &[DeliveryView], with_key: bool) -> Markup {
    html! {
        div.scroll { table #deliveries {
            thead { tr {
                th { "Queued (UTC)" }
                @if with_key { th { "Account" } th { "Key" } }
                th { "Event" } th { "URL" } th { "State" } th { "Attempts" }
            } }
            tbody {
                @for d in deliveries {
                    tr {
                        td { (d.created_at.get(..19).unwrap_or("").replace('T', " ")) }
                        @if with_key { td { (d.account) } td { code { (d.key_id) } } }
                        td { code { (d.event_type) } }
                        td { code { (d.url) } }
                        td {
                            (d.state)
                            @if let Some(next) = &d.next_attempt_at { br; span.muted { "next " (next.get(..19).unwrap_or("").replace('T', " ")) } }
                        }
                        td {
                            ol {
                                @for a in &d.attempts {
                                    li {
                                        (a.at.get(11..19).unwrap_or("")) " · "
                                        @match a.status { Some(s) => { "HTTP " (s) }, None => "no answer" }
                                        " · " (a.duration_ms) " ms"
                                        @if let Some(e) = &a.error { br; span.muted { (e) } }
                                    }
                                }
                            }
                            @if d.attempts.is_empty() { span.muted { "none yet" } }
                            @if d.attempts.is_empty() { @if let Some(e) = &d.last_error { br; span.muted { (e) } } }
                        }
                    }
                }
                @if deliveries.is_empty() { tr { td colspan=(if with_key { 7 } else { 5 }) { "No webhook deliveries yet." } } }
            }
        } }
    }
}

async fn key_deliveries(
    State(state): State<Arc<AppState>>,
    c: Customer,
    Path(id): Path<String>,
) -> Response {
    let key = match own_key(&state, &c, id).await {
        Ok(k) => k,
        Err(r) => return r,
    };
    let filter = DeliveryFilter {
        key: Some(key.id.clone()),
        account: Some(c.user.account_id.clone()),
        limit: SHOWN,
    };
    let deliveries = match operator_call(&state, async move |s, _| {
        operator::webhook_deliveries(s, &filter).await
    })
    .await
    {
        Ok(d) => d,
        Err(e) => return internal(e).into_response(),
    };
    let body = html! {
        p { "The last " (SHOWN) " webhook deliveries of key " strong { (key.name) } ", newest first. Failed attempts are retried with growing delays for up to 24 hours." }
        (table(&deliveries, false))
        p { a href=(format!("/console/keys/{}", key.id)) { "Back to the key" } }
    };
    respond(
        StatusCode::OK,
        page(
            &format!("Webhooks of {}", key.name),
            Nav::Customer,
            &c.session.csrf,
            &Flash::None,
            body,
        ),
    )
}

async fn all_deliveries(State(state): State<Arc<AppState>>, o: Operator) -> Response {
    let filter = DeliveryFilter {
        limit: SHOWN,
        ..Default::default()
    };
    let deliveries = match operator_call(&state, async move |s, _| {
        operator::webhook_deliveries(s, &filter).await
    })
    .await
    {
        Ok(d) => d,
        Err(e) => return internal(e).into_response(),
    };
    let body = html! {
        p { "The last " (SHOWN) " webhook deliveries of every account, newest first." }
        (table(&deliveries, true))
    };
    respond(
        StatusCode::OK,
        page(
            "Webhooks",
            Nav::Operator,
            &o.session.csrf,
            &Flash::None,
            body,
        ),
    )
}
