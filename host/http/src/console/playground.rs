//! The playground: paste a link, choose a key and an endpoint, and see the
//! answer — JSON, image grid, players, download links and the credits it
//! cost. It is a real parse, charged like any other (the page says so): one
//! parse call as the chosen key, its answer rendered as the REST body.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{Markup, html};
use serde_json::Value;

use super::super::envelope::{ApiError, internal};
use super::super::request_id::{ClientRequestId, RequestId};
use super::super::state::AppState;
use super::customer::{known_platforms, operator_call};
use super::form::Form;
use super::layout::{Flash, Nav, csrf_field, page, refusal, respond};
use super::session::{Customer, csrf_ok};
use mediaparse_auth as auth;
use mediaparse_call::{self as call, Door, ParseCall, RequestIds};
use mediaparse_core::Delivery;
use mediaparse_parse::CacheUse;
use mediaparse_store::KeyRecord;

pub fn router() -> Router<Arc<AppState>> {
    Router::new().route("/console/playground", get(show).post(run))
}

struct Choice<'a> {
    link: &'a str,
    key: &'a str,
    endpoint: &'a str,
    delivery: &'a str,
}

fn form(c: &Customer, keys: &[KeyRecord], known: &[String], choice: &Choice<'_>) -> Markup {
    html! {
        p.note { strong { "This is a real parse: a success is charged to your account like any API call." } " Failures cost nothing." }
        form method="post" action="/console/playground" {
            (csrf_field(&c.session.csrf))
            label for="link" { "Link or share text" }
            textarea #link name="link" required { (choice.link) }
            label for="key" { "Key" }
            select #key name="key" required {
                @for k in keys { option value=(k.id) selected[choice.key == k.id] { (k.name) " (" (k.token_prefix) "…)" } }
            }
            label for="endpoint" { "Endpoint" }
            select #endpoint name="endpoint" {
                option value="" selected[choice.endpoint.is_empty()] { "Common: POST /api/v1/parse" }
                @for p in known { option value=(p) selected[choice.endpoint == p] { "Platform: POST /api/v1/platforms/" (p) "/parse" } }
            }
            label for="delivery" { "Media delivery" }
            select #delivery name="delivery" {
                option value="tunnel" selected[choice.delivery != "direct"] { "tunnel (through this service: previews play here)" }
                option value="direct" selected[choice.delivery == "direct"] { "direct (the platform's URLs)" }
            }
            div { button type="submit" { "Parse (charged)" } }
        }
        @if keys.is_empty() { p.note.error { "You need a key first: " a href="/console/keys" { "create one" } "." } }
    }
}

async fn own_keys(state: &AppState, c: &Customer) -> Result<Vec<KeyRecord>, Response> {
    let account = c.user.account_id.clone();
    match operator_call(state, async move |s, _| {
        Ok(s.keys_of_account_async(&account).await?)
    })
    .await
    {
        Ok(k) => Ok(k),
        Err(e) => Err(internal(e).into_response()),
    }
}

async fn show(State(state): State<Arc<AppState>>, c: Customer) -> Response {
    let keys = match own_keys(&state, &c).await {
        Ok(k) => k,
        Err(r) => return r,
    };
    let choice = Choice {
        link: "",
        key: "",
        endpoint: "",
        delivery: "tunnel",
    };
    let body = form(&c, &keys, &known_platforms(&state), &choice);
    respond(
        StatusCode::OK,
        page(
            "Playground",
            Nav::Customer,
            &c.session.csrf,
            &Flash::None,
            body,
        ),
    )
}

/// The media object of an answer (`data`, or `data.media` on a platform endpoint).
fn media(answer: &Value) -> Option<&Value> {
    let data = answer.get("data")?;
    if data.get("media").is_some() {
        data.get("media")
    } else if data.is_object() {
        Some(data)
    } else {
        None
    }
}

fn previews(m: &Value) -> Markup {
    let list = |name: &str| {
        m.get(name)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).unwrap_or("").to_string();
    let num = |v: &Value, f: &str| v.get(f).and_then(Value::as_u64).unwrap_or(0);
    let (images, videos, audios) = (list("images"), list("videos"), list("audios"));
    html! {
        @if !images.is_empty() {
            h2 { "Images (" (images.len()) ")" }
            div.grid {
                @for (i, img) in images.iter().enumerate() {
                    figure {
                        img src=(text(img, "url")) alt=(format!("Image {}", i + 1)) loading="lazy" referrerpolicy="no-referrer";
                        figcaption { (num(img, "width")) "×" (num(img, "height")) " · " a href=(text(img, "url")) download { "Download" } }
                    }
                }
            }
        }
        @if !videos.is_empty() {
            h2 { "Videos (" (videos.len()) ")" }
            @for v in &videos {
                figure {
                    video controls preload="metadata" src=(text(v, "url")) width="320" {}
                    figcaption { (text(v, "quality")) " · " (num(v, "width")) "×" (num(v, "height")) " · " a href=(text(v, "url")) download { "Download" } }
                }
            }
        }
        @if !audios.is_empty() {
            h2 { "Audio (" (audios.len()) ")" }
            @for a in &audios {
                figure {
                    audio controls preload="none" src=(text(a, "url")) {}
                    figcaption { (text(a, "quality")) " · " a href=(text(a, "url")) download { "Download" } }
                }
            }
        }
    }
}

async fn run(
    State(state): State<Arc<AppState>>,
    Extension(request_id): Extension<RequestId>,
    client_id: Option<Extension<ClientRequestId>>,
    c: Customer,
    body: Bytes,
) -> Response {
    let f = Form::parse(&body);
    if !csrf_ok(&c.session, &f) {
        return refusal(
            StatusCode::FORBIDDEN,
            "Request refused",
            "This form did not carry this session's CSRF token. Reload the page and try again.",
        );
    }
    let keys = match own_keys(&state, &c).await {
        Ok(k) => k,
        Err(r) => return r,
    };
    let known = known_platforms(&state);
    let choice = Choice {
        link: f.get("link"),
        key: f.get("key"),
        endpoint: f.get("endpoint"),
        delivery: if f.get("delivery") == "direct" {
            "direct"
        } else {
            "tunnel"
        },
    };
    let again = |message: String| {
        let body = form(&c, &keys, &known, &choice);
        respond(
            StatusCode::BAD_REQUEST,
            page(
                "Playground",
                Nav::Customer,
                &c.session.csrf,
                &Flash::Error(message),
                body,
            ),
        )
    };
    let Some(key) = keys.iter().find(|k| k.id == choice.key).cloned() else {
        return again("Choose one of your keys.".into());
    };
    if auth::is_expired(&key, state.auth_now()) {
        return again("This key has expired: edit its expiry or choose another key.".into());
    }
    let path_platform = Some(choice.endpoint.to_string()).filter(|p| !p.is_empty());
    if path_platform.as_ref().is_some_and(|p| !known.contains(p)) {
        return again("Choose an endpoint from the list.".into());
    }
    // The key's rate limit applies as to any parse of the key.
    let default = state.services.config.load().limits.rate_limit_per_minute;
    if let Err(e) = state.rate_limits.check(&key, default).await {
        return again(ApiError::from(e).msg);
    }
    let input = match super::super::body::parse_input(
        serde_json::json!({"url": choice.link})
            .to_string()
            .as_bytes(),
    ) {
        Ok(input) => input,
        Err(e) => return again(e.msg),
    };
    let delivery = match choice.delivery {
        "direct" => Delivery::Direct,
        _ => Delivery::Tunnel,
    };
    // Charged under a server-minted ledger id, like the REST doors: a
    // client's `X-Request-Id` is only kept beside it.
    let ids = RequestIds::of(&request_id.0, client_id.as_ref().map(|c| c.0.0.as_str()));
    let call = ParseCall {
        key: &key,
        door: Door::Playground,
        input: &input,
        platform: path_platform.as_deref(),
        delivery: Some(delivery),
        idempotency: None,
        cache: CacheUse::Allowed,
        ids,
        hold: None,
    };
    let answer = call::answer(state.callee(), &call).await;
    let (status, charged) = (answer.status(), answer.charged);
    let json: Value = serde_json::from_str(&answer.body()).unwrap_or(Value::Null);
    let pretty = serde_json::to_string_pretty(&json).unwrap_or_default();
    let body = html! {
        (form(&c, &keys, &known, &choice))
        h2 { "Answer" }
        p role="status" {
            "HTTP " (status) " · "
            strong { (charged) " credit" @if charged != 1 { "s" } " charged" }
            " · request id " code { (answer.request_id) }
        }
        @if let Some(m) = media(&json).filter(|_| status == 200) { (previews(m)) }
        h2 { "JSON" }
        pre #answer { (pretty) }
        button type="button" data-copy="answer" { "Copy JSON" }
    };
    respond(
        StatusCode::OK,
        page(
            "Playground",
            Nav::Customer,
            &c.session.csrf,
            &Flash::None,
            body,
        ),
    )
}
