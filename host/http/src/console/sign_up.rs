//! Open sign-up (`[console] signup = "open"`): an e-mail address, verified
//! before the account is usable or gets its starting credits.
//!
//! The form takes only the address. A new one gets an account (balance 0)
//! and a user without a password, and an e-mail with a one-time link to
//! `/console/invite/{secret}`, the invitation page: choosing the password
//! there verifies the address, and the same transaction grants the
//! starting credits, once (`Store::accept_invite`). An address still
//! waiting gets a fresh link (the old one stops working); an address with
//! an account gets an e-mail saying so, without a link. The answer is the
//! same page with the same status for all three, so it never tells whether
//! an address is registered. The form is behind the pre-session CSRF check
//! and the sign-in throttle; nothing is hashed here (the password is set
//! through the link, on the password pool).
//!
//! The mail goes out through `mail_command` after the answer; its link is
//! never logged (the request span redacts `/console/invite/…`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::super::envelope::internal;
use super::super::state::AppState;
use super::form::Form;
use super::layout::{Flash, Nav, csrf_field, page, refusal, respond};
use super::session::{Throttle, digest, random_secret};
use super::sign_in::{THROTTLED, csrf_refused, form_csrf_ok, form_token, with_cookie};
use mediaparse_config::Signup;
use mediaparse_core::ids::new_id;
use mediaparse_mail::{self as mail, Message};
use mediaparse_store::{SignUpOutcome, normalize_email};

/// How long a sign-up's verification link works.
pub const SIGN_UP_LINK_SECS: i64 = 86_400;

/// The one answer to a well-formed sign-up, whatever the address's state.
pub const SIGN_UP_SENT: &str = "If this address can sign up, a link to confirm it is on its way. Open it to choose your password; it works for 24 hours.";

fn sign_up_closed() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "Sign-up is closed",
        "This service admits users by invitation. Ask its operator for an invitation link.",
    )
}

fn sign_up_form(csrf: &str, email: &str) -> Markup {
    html! {
        form method="post" action="/console/sign-up" {
            (csrf_field(csrf))
            label for="email" { "E-mail" }
            input #email type="email" name="email" autocomplete="email" required value=(email);
            div { button type="submit" { "Send me a link" } }
        }
    }
}

pub async fn sign_up_page(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let settings = state.services.config.load().console.clone();
    if settings.signup != Signup::Open {
        return sign_up_closed();
    }
    let (csrf, set) = form_token(&state, &headers);
    let body = html! {
        p { "A new account starts with " strong { (settings.starting_credits) " credits" } " once you confirm your e-mail address: we send you a link to choose your password." }
        (sign_up_form(&csrf, ""))
    };
    with_cookie(
        respond(
            StatusCode::OK,
            page("Sign up", Nav::None, "", &Flash::None, body),
        ),
        set,
    )
}

pub async fn sign_up(
    State(state): State<Arc<AppState>>,
    axum::Extension(throttle): axum::Extension<Arc<Throttle>>,
    request: axum::extract::Request,
) -> Response {
    let settings = state.services.config.load().console.clone();
    if settings.signup != Signup::Open {
        return sign_up_closed();
    }
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
    let typed = form.get("email").to_string();
    let again = |status: StatusCode, message: String| {
        respond(
            status,
            page(
                "Sign up",
                Nav::None,
                "",
                &Flash::Error(message),
                sign_up_form(form.get("csrf"), &typed),
            ),
        )
    };
    // Sign-ups are attempts too: the same throttle keeps scripts out.
    if !throttle.allow(&typed, address) {
        return again(StatusCode::TOO_MANY_REQUESTS, THROTTLED.into());
    }
    // Only the form of the address is judged here, never whether it is known.
    let Ok(email) = normalize_email(&typed) else {
        return again(
            StatusCode::BAD_REQUEST,
            "That is not an e-mail address.".into(),
        );
    };
    let Some(mail_command) = settings.mail_command.clone() else {
        // The configuration check makes open sign-up need a mail command.
        return internal("open sign-up without a mail_command").into_response();
    };
    let secret = random_secret();
    let now = state.auth_now();
    let credits = i64::from(settings.starting_credits);
    let signed_up = state
        .services
        .store
        .sign_up_async(
            &new_id("usr"),
            &email,
            &digest(&secret),
            now + SIGN_UP_LINK_SECS,
            credits,
            now,
        )
        .await;
    let outcome = match signed_up {
        Ok(outcome) => outcome,
        Err(mediaparse_store::StoreError::Invalid(m)) => return again(StatusCode::BAD_REQUEST, m),
        Err(e) => return internal(e).into_response(),
    };
    let base = state
        .tunnel
        .public_base_url
        .trim_end_matches('/')
        .to_string();
    let message = match &outcome {
        SignUpOutcome::Created(user) | SignUpOutcome::Pending(user) => {
            tracing::info!(user = %user.id, again = matches!(outcome, SignUpOutcome::Pending(_)), "console: sign-up link issued");
            confirm_message(&email, &base, &secret, settings.starting_credits)
        }
        SignUpOutcome::Taken => {
            tracing::info!("console: sign-up of a registered address; reminder sent");
            registered_message(&email, &base)
        }
    };
    match mail::reserve() {
        Ok(slot) => {
            tokio::spawn(async move {
                if let Err(e) = mail::send(&mail_command, &message, slot).await {
                    tracing::warn!(error = %e, "console: sign-up e-mail not sent");
                }
            });
        }
        Err(e) => tracing::warn!(error = %e, "console: sign-up e-mail dropped"),
    }
    respond(
        StatusCode::OK,
        page(
            "Check your e-mail",
            Nav::None,
            "",
            &Flash::Ok(SIGN_UP_SENT.into()),
            html! { p { a href="/console/sign-in" { "Back to sign-in" } } },
        ),
    )
}

/// The mail with the verification link.
fn confirm_message(to: &str, base: &str, secret: &str, credits: u32) -> Message {
    Message {
        to: to.to_string(),
        subject: "Confirm your e-mail address for mediaparse".into(),
        text: format!(
            "Someone, hopefully you, asked to create a mediaparse account at {base} with this address.\n\n\
             To confirm it and choose your password, open this link within 24 hours:\n\n\
             {base}/console/invite/{secret}\n\n\
             Your account starts with {credits} credits once confirmed. If you did not ask for this, ignore this message: \
             nobody can use the account without the link.\n"
        ),
    }
}

/// The mail for an address that has an account already: no link.
fn registered_message(to: &str, base: &str) -> Message {
    Message {
        to: to.to_string(),
        subject: "You already have a mediaparse account".into(),
        text: format!(
            "Someone, hopefully you, asked to create a mediaparse account at {base} with this address, \
             but it has an account already.\n\n\
             Sign in at {base}/console/sign-in. Forgot your password? Ask the operator of this service for a new link.\n\n\
             If you did not ask for this, ignore this message; nothing was changed.\n"
        ),
    }
}
