//! Signing in and out: customers by e-mail and password, the operator by
//! the operator token; one-time invitation links (which also verify an
//! open sign-up's address, `sign_up`).
//!
//! Password hashing is the expensive part, so it comes last: the form's
//! CSRF token, the throttle and the lookup (invitation secret known, e-mail
//! known with a password) come first, and the hash runs on the password
//! pool (`auth::password_pool`), `503` with `Retry-After` when it is full.
//! An unknown e-mail gets the same answer as a wrong password after the
//! same time, spent asleep rather than hashing (the pool's measured
//! verification time, ±10 %), and the same `503` while the pool is full.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use maud::{Markup, html};

use super::super::envelope::internal;
use super::super::state::AppState;
use super::form::Form;
use super::layout::{Flash, Nav, csrf_field, page, refusal, respond};
use super::session::{
    self, FORM_COOKIE, SESSION_COOKIE, Throttle, csrf_ok, digest, read_cookie, same_secret,
    set_cookie,
};
use mediaparse_auth::password_pool::{PoolError, RETRY_AFTER_S};
use mediaparse_config::Signup;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/console/sign-in", get(sign_in_page).post(sign_in))
        .route("/console/sign-out", post(sign_out))
        .route("/console/sign-out-everywhere", post(sign_out_everywhere))
        .route(
            "/console/invite/{secret}",
            get(invite_page).post(accept_invite),
        )
        .route(
            "/console/sign-up",
            get(super::sign_up::sign_up_page).post(super::sign_up::sign_up),
        )
        .route(
            "/console/admin/sign-in",
            get(operator_page).post(operator_sign_in),
        )
}

const SIGN_IN_REFUSED: &str = "Wrong e-mail or password.";
pub(super) const THROTTLED: &str = "Too many sign-in attempts. Wait a few minutes and try again.";

/// The pre-session CSRF token: the cookie's, or a fresh one to set.
pub(super) fn form_token(state: &AppState, headers: &HeaderMap) -> (String, Option<String>) {
    match read_cookie(state, headers, FORM_COOKIE) {
        Some(t) => (t.to_string(), None),
        None => {
            let t = session::random_secret();
            let set = set_cookie(state, FORM_COOKIE, Some(&t), 3600);
            (t, Some(set))
        }
    }
}

pub(super) fn with_cookie(mut response: Response, set: Option<String>) -> Response {
    if let Some(v) = set.and_then(|v| v.parse().ok()) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// The pre-session form's field matches its cookie.
pub(super) fn form_csrf_ok(state: &AppState, headers: &HeaderMap, form: &Form) -> bool {
    read_cookie(state, headers, FORM_COOKIE).is_some_and(|c| same_secret(form.get("csrf"), c))
}

/// Every password-hashing slot is taken: come back in a moment.
fn busy() -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "Busy",
        "Too many sign-ins at this moment. Try again in a few seconds.",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, RETRY_AFTER_S.into());
    response
}

/// The answer for a password pool failure.
fn pool_failed(e: PoolError) -> Response {
    match e {
        PoolError::Busy => busy(),
        PoolError::Join(e) => internal(e).into_response(),
    }
}

pub(super) fn csrf_refused() -> Response {
    refusal(
        StatusCode::FORBIDDEN,
        "Request refused",
        "This form has expired or did not come from this console (CSRF check). Reload the page and try again.",
    )
}

fn signed_in(cookie: String, to: &str) -> Response {
    let mut response = Redirect::to(to).into_response();
    if let Ok(v) = cookie.parse() {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

fn sign_in_form(csrf: &str, email: &str, signup_open: bool) -> Markup {
    html! {
        form method="post" action="/console/sign-in" {
            (csrf_field(csrf))
            label for="email" { "E-mail" }
            input #email type="email" name="email" autocomplete="username" required value=(email);
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            div { button type="submit" { "Sign in" } }
        }
        @if signup_open { p { "No account yet? " a href="/console/sign-up" { "Sign up" } } }
        p.muted { "Operators: " a href="/console/admin/sign-in" { "sign in with the operator token" } "." }
    }
}

async fn sign_in_page(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let (csrf, set) = form_token(&state, &headers);
    let open = state.services.config.load().console.signup == Signup::Open;
    with_cookie(
        respond(
            StatusCode::OK,
            page(
                "Sign in",
                Nav::None,
                "",
                &Flash::None,
                sign_in_form(&csrf, "", open),
            ),
        ),
        set,
    )
}

async fn sign_in(
    State(state): State<Arc<AppState>>,
    axum::Extension(throttle): axum::Extension<Arc<Throttle>>,
    request: axum::extract::Request,
) -> Response {
    let address = state.client_address(request.extensions(), request.headers());
    let headers = request.headers().clone();
    let Ok(body) = axum::body::to_bytes(request.into_body(), 16 * 1024).await else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "Request refused",
            "The form could not be read.",
        );
    };
    let form = Form::parse(&body);
    if !form_csrf_ok(&state, &headers, &form) {
        return csrf_refused();
    }
    let email = form.get("email").to_string();
    let open = state.services.config.load().console.signup == Signup::Open;
    let again = |status: StatusCode, message: &str| {
        respond(
            status,
            page(
                "Sign in",
                Nav::None,
                "",
                &Flash::Error(message.into()),
                sign_in_form(form.get("csrf"), &email, open),
            ),
        )
    };
    if !throttle.allow(&email, address) {
        tracing::info!(?address, "console sign-in throttled");
        return again(StatusCode::TOO_MANY_REQUESTS, THROTTLED);
    }
    let found = match state.services.store.user_for_sign_in_async(&email).await {
        Ok(found) => found,
        Err(e) => return internal(e).into_response(),
    };
    let pool = &state.guards.passwords;
    let known = found.and_then(|f| f.password_hash.clone().map(|hash| (f.user, hash)));
    let Some((user, stored)) = known else {
        // No hash to check: answer as a wrong password would, as late,
        // and busy when a real check would be.
        if pool.is_full() {
            return busy();
        }
        pool.pretend_verify().await;
        return again(StatusCode::UNAUTHORIZED, SIGN_IN_REFUSED);
    };
    let password = form.get("password").to_string();
    match pool
        .verify(move || session::verify_password(&password, &stored))
        .await
    {
        Ok(true) => match session::start(&state, Some(user.id), false).await {
            Ok(cookie) => signed_in(cookie, "/console"),
            Err(r) => r,
        },
        Ok(false) => again(StatusCode::UNAUTHORIZED, SIGN_IN_REFUSED),
        Err(e) => pool_failed(e),
    }
}

/// Sign out this browser (any session kind).
async fn sign_out(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(current) = (match session::current(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return r,
    }) else {
        return Redirect::to("/console/sign-in").into_response();
    };
    if !csrf_ok(&current, &Form::parse(&body)) {
        return csrf_refused();
    }
    // The cookie is cleared whatever the store says; an expired session
    // is swept later.
    if let Err(e) = state
        .services
        .store
        .delete_session_async(&current.token_hash)
        .await
    {
        tracing::warn!(error = %e, "console: session not deleted at sign-out");
    }
    signed_out(&state)
}

/// End every session of this user (or every operator session).
async fn sign_out_everywhere(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(current) = (match session::current(&state, &headers).await {
        Ok(s) => s,
        Err(r) => return r,
    }) else {
        return Redirect::to("/console/sign-in").into_response();
    };
    if !csrf_ok(&current, &Form::parse(&body)) {
        return csrf_refused();
    }
    let ended = state
        .services
        .store
        .delete_sessions_of_async(current.user_id.as_deref())
        .await;
    match ended {
        Ok(n) => {
            tracing::info!(sessions = n, "console: signed out everywhere");
            signed_out(&state)
        }
        Err(e) => internal(e).into_response(),
    }
}

fn signed_out(state: &AppState) -> Response {
    let mut response = Redirect::to("/console/sign-in").into_response();
    if let Ok(v) = set_cookie(state, SESSION_COOKIE, None, 0).parse() {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

fn password_form(action: &str, csrf: &str) -> Markup {
    html! {
        form method="post" action=(action) {
            (csrf_field(csrf))
            label for="password" { "New password (10 characters or more)" }
            input #password type="password" name="password" autocomplete="new-password" minlength="10" required;
            div { button type="submit" { "Set password and sign in" } }
        }
    }
}

fn invalid_link() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "Link not valid",
        "This invitation link was used already or has expired. Ask your operator for a new one.",
    )
}

async fn invite_page(
    State(state): State<Arc<AppState>>,
    Path(secret): Path<String>,
    headers: HeaderMap,
) -> Response {
    let now = state.auth_now();
    let hash = digest(&secret);
    let user = match state.services.store.user_by_invite_async(&hash, now).await {
        Ok(Some(user)) => user,
        Ok(None) => return invalid_link(),
        Err(e) => return internal(e).into_response(),
    };
    let (csrf, set) = form_token(&state, &headers);
    let body = html! {
        p { "Welcome, " strong { (user.email) } " (account " code { (user.account_id) } "). Choose a password; this link then stops working." }
        (password_form(&format!("/console/invite/{secret}"), &csrf))
    };
    with_cookie(
        respond(
            StatusCode::OK,
            page("Set your password", Nav::None, "", &Flash::None, body),
        ),
        set,
    )
}

async fn accept_invite(
    State(state): State<Arc<AppState>>,
    Path(secret): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    if !form_csrf_ok(&state, &headers, &form) {
        return csrf_refused();
    }
    // The link first: an unknown or used secret costs a lookup, never a hash.
    let now = state.auth_now();
    let hash = digest(&secret);
    match state.services.store.user_by_invite_async(&hash, now).await {
        Ok(Some(_)) => {}
        Ok(None) => return invalid_link(),
        Err(e) => return internal(e).into_response(),
    }
    let password = form.get("password").to_string();
    let hashed = match state
        .guards
        .passwords
        .run(move || session::hash_password(&password))
        .await
    {
        Ok(hashed) => hashed,
        Err(e) => return pool_failed(e),
    };
    let password_hash = match hashed {
        Ok(h) => h,
        Err(e) => {
            let body = password_form(&format!("/console/invite/{secret}"), form.get("csrf"));
            return respond(
                StatusCode::BAD_REQUEST,
                page(
                    "Set your password",
                    Nav::None,
                    "",
                    &Flash::Error(e.to_string()),
                    body,
                ),
            );
        }
    };
    let accepted = state
        .services
        .store
        .accept_invite_async(&hash, &password_hash, now)
        .await;
    let user = match accepted {
        Ok(user) => {
            tracing::info!(user = %user.id, "console: password set through a one-time link");
            user
        }
        Err(mediaparse_store::StoreError::NotFound(..)) => return invalid_link(),
        Err(e) => return internal(e).into_response(),
    };
    match session::start(&state, Some(user.id), false).await {
        Ok(cookie) => signed_in(cookie, "/console"),
        Err(r) => r,
    }
}

fn operator_form(csrf: &str) -> Markup {
    html! {
        form method="post" action="/console/admin/sign-in" {
            (csrf_field(csrf))
            label for="token" { "Operator token" }
            input #token type="password" name="token" autocomplete="off" required;
            div { button type="submit" { "Sign in as operator" } }
        }
    }
}

async fn operator_page(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Ok(Some(s)) = session::current(&state, &headers).await
        && s.operator
    {
        return Redirect::to("/console/admin").into_response();
    }
    if state.admin_token.is_none() {
        return refusal(
            StatusCode::NOT_FOUND,
            "Operator console off",
            "Start the service with an operator token (--admin-token) to use the operator console.",
        );
    }
    let (csrf, set) = form_token(&state, &headers);
    with_cookie(
        respond(
            StatusCode::OK,
            page(
                "Operator sign-in",
                Nav::None,
                "",
                &Flash::None,
                operator_form(&csrf),
            ),
        ),
        set,
    )
}

async fn operator_sign_in(
    State(state): State<Arc<AppState>>,
    axum::Extension(throttle): axum::Extension<Arc<Throttle>>,
    request: axum::extract::Request,
) -> Response {
    let Some(expected) = state.admin_token.clone() else {
        return refusal(
            StatusCode::NOT_FOUND,
            "Operator console off",
            "Start the service with an operator token (--admin-token) to use the operator console.",
        );
    };
    let address = state.client_address(request.extensions(), request.headers());
    let headers = request.headers().clone();
    let Ok(body) = axum::body::to_bytes(request.into_body(), 16 * 1024).await else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "Request refused",
            "The form could not be read.",
        );
    };
    let form = Form::parse(&body);
    if !form_csrf_ok(&state, &headers, &form) {
        return csrf_refused();
    }
    let again = |status: StatusCode, message: &str| {
        respond(
            status,
            page(
                "Operator sign-in",
                Nav::None,
                "",
                &Flash::Error(message.into()),
                operator_form(form.get("csrf")),
            ),
        )
    };
    if !throttle.allow_operator(address) {
        return again(StatusCode::TOO_MANY_REQUESTS, THROTTLED);
    }
    if !same_secret(form.get("token"), &expected) {
        return again(StatusCode::UNAUTHORIZED, "Not the operator token.");
    }
    match session::start(&state, None, true).await {
        Ok(cookie) => signed_in(cookie, "/console/admin"),
        Err(r) => r,
    }
}
