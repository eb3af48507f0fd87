//! The web console: customers manage their keys, read their
//! usage and try links; operators manage accounts and watch the service.
//! Server-rendered HTML (maud, compiled in), one small stylesheet and a few
//! lines of our own script (copy buttons), both embedded in the binary.
//!
//! It is part of the HTTP layer: pages call the same functions as the API
//! (`operator::*` for keys, credits and usage, `parse` for the playground).
//! A console session is a cookie, never a bearer token: the API reads only
//! `Authorization`, the console only its cookie.
//!
//! | route | what |
//! |---|---|
//! | `GET/POST /console/sign-in`, `POST /console/sign-out[-everywhere]` | sessions |
//! | `GET/POST /console/invite/{secret}` | one-time link: set the password |
//! | `GET/POST /console/sign-up` | open sign-up (`[console] signup = "open"`): a link by e-mail |
//! | `GET /console`, `/console/keys…`, `/console/usage[.csv]`, `/console/playground`, `/console/docs` | customer pages |
//! | `GET/POST /console/admin…` | operator pages (operator token sign-in) |
//! | `POST /api/v1/admin/users`, `GET /api/v1/admin/users` | invite a user (operator token) |

mod admin;
mod customer;
mod form;
pub mod invite_api;
mod layout;
mod playground;
mod session;
mod sign_in;
mod sign_up;
mod usage;
mod webhooks;

use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::state::AppState;

pub use invite_api::{Invited, invitation};
pub use session::{Throttle, calibrate_password_check, operator_fingerprint};

pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    let throttle = Arc::new(Throttle::default());
    Router::new()
        .route("/console/assets/console.css", get(css))
        .route("/console/assets/console.js", get(js))
        .merge(sign_in::router())
        .merge(customer::router())
        .merge(usage::router())
        .merge(playground::router())
        .merge(admin::router())
        .merge(webhooks::router())
        .layer(axum::Extension(throttle))
        .layer(axum::middleware::from_fn(super::page_headers::add))
        .merge(invite_api::router(state))
}

const CSS: &str = include_str!("assets/console.css");
const JS: &str = include_str!("assets/console.js");

async fn css() -> Response {
    asset("text/css; charset=utf-8", CSS)
}

async fn js() -> Response {
    asset("text/javascript; charset=utf-8", JS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}
