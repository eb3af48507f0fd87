//! The page frame: head, navigation, flash notes, and small shared pieces.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

/// Which navigation a page shows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// Signed out (sign-in, invitation, sign-up).
    None,
    Customer,
    Operator,
}

/// A note at the top of a page.
pub enum Flash {
    None,
    Ok(String),
    Error(String),
}

/// The whole page. `csrf` is the session's token for the sign-out forms.
pub fn page(title: &str, nav: Nav, csrf: &str, flash: &Flash, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · mediaparse console" }
                link rel="stylesheet" href="/console/assets/console.css";
                script src="/console/assets/console.js" defer {}
            }
            body {
                header {
                    strong { "mediaparse" }
                    @match nav {
                        Nav::Customer => {
                            nav aria-label="Console" {
                                a href="/console" { "Overview" }
                                a href="/console/keys" { "Keys" }
                                a href="/console/usage" { "Usage" }
                                a href="/console/playground" { "Playground" }
                                a href="/console/docs" { "Docs" }
                            }
                            (sign_out_forms(csrf))
                        }
                        Nav::Operator => {
                            nav aria-label="Operator console" {
                                a href="/console/admin" { "Accounts" }
                                a href="/console/admin/extractors" { "Extractors" }
                                a href="/console/admin/failures" { "Failures" }
                                a href="/console/admin/webhooks" { "Webhooks" }
                            }
                            (sign_out_forms(csrf))
                        }
                        Nav::None => {}
                    }
                }
                main {
                    h1 { (title) }
                    @match flash {
                        Flash::Ok(m) => p.note.ok role="status" { (m) },
                        Flash::Error(m) => p.note.error role="alert" { (m) },
                        Flash::None => {},
                    }
                    (body)
                }
            }
        }
    }
}

fn sign_out_forms(csrf: &str) -> Markup {
    html! {
        form.inline method="post" action="/console/sign-out" {
            input type="hidden" name="csrf" value=(csrf);
            button.plain type="submit" { "Sign out" }
        }
        form.inline method="post" action="/console/sign-out-everywhere" {
            input type="hidden" name="csrf" value=(csrf);
            button.plain type="submit" { "Sign out everywhere" }
        }
    }
}

/// A rendered page with its status; console pages are never cached.
pub fn respond(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        markup.into_string(),
    )
        .into_response()
}

/// A token shown once, with its copy button.
pub fn shown_once(id: &str, token: &str) -> Markup {
    html! {
        div.note.ok role="status" {
            p { strong { "Your token — shown only this once. " } "Copy it now; we keep only its hash." }
            code.token id=(id) { (token) }
            button type="button" data-copy=(id) { "Copy token" }
        }
    }
}

/// The hidden CSRF field of a form.
pub fn csrf_field(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

/// `2026-11-24 12:00` (UTC) for unix seconds.
pub fn time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

/// A refusal page (CSRF, throttle, not found) with its status.
pub fn refusal(status: StatusCode, title: &str, message: &str) -> Response {
    respond(
        status,
        page(
            title,
            Nav::None,
            "",
            &Flash::Error(message.into()),
            html! { p { a href="/console" { "Back to the console" } } },
        ),
    )
}

/// A colour swatch of the chart's legend.
pub fn swatch(colour: &str) -> Markup {
    html! { span.sw style=(format!("background:{colour}")) aria-hidden="true" {} }
}
