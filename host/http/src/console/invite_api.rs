//! Inviting console users: the admin API (`POST /api/v1/admin/users`,
//! `GET /api/v1/admin/users[?account=]`, operator token) and the function
//! the operator page and the CLI's twin share. An invitation is a one-time
//! link to set a password; inviting a known user again issues a new link
//! (the way to reset a password).

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::super::envelope::{ApiError, internal};
use super::super::extract::{JsonBody, OperatorToken, serde_body};
use super::super::state::AppState;
use super::session::{INVITE_SECS, digest, random_secret};
use mediaparse_core::ids::new_id;
use mediaparse_store::{Store, StoreError, UserRecord};

pub fn router(state: Arc<AppState>) -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/admin/users", get(list).post(create))
        .route_layer(axum::middleware::from_fn_with_state(state, guard))
}

async fn guard(_: OperatorToken, request: Request, next: Next) -> Response {
    next.run(request).await
}

/// A new invitation: the user and the link, shown once.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invited {
    pub user: UserRecord,
    pub link: String,
    pub expires_at: String,
}

/// Invite `email` to `account` (blocking: it writes the store). The link
/// starts with `base_url`, the service's public address.
pub fn invitation(
    store: &Store,
    base_url: &str,
    account: &str,
    email: &str,
    now: i64,
) -> Result<Invited, StoreError> {
    let link = Link::new(now);
    let user = store.invite_user(
        &new_id("usr"),
        account.trim(),
        email,
        &digest(&link.secret),
        link.expires,
        now,
    )?;
    Ok(link.invited(user, base_url))
}

/// [`invitation`], awaited; a refusal is its message.
pub async fn invite(state: &AppState, account: &str, email: &str) -> Result<Invited, String> {
    let now = state.auth_now();
    let link = Link::new(now);
    let made = state
        .services
        .store
        .invite_user_async(
            &new_id("usr"),
            account.trim(),
            email,
            &digest(&link.secret),
            link.expires,
            now,
        )
        .await;
    match made {
        Ok(user) => Ok(link.invited(user, &state.tunnel.public_base_url)),
        Err(StoreError::Invalid(m)) => Err(m),
        Err(e) => Err(format!("cannot invite: {e}")),
    }
}

/// A fresh one-time link: its secret and when it expires.
struct Link {
    secret: String,
    expires: i64,
}

impl Link {
    fn new(now: i64) -> Link {
        Link {
            secret: random_secret(),
            expires: now + INVITE_SECS,
        }
    }

    /// The invitation of `user` (just invited with this link's digest).
    fn invited(self, user: UserRecord, base_url: &str) -> Invited {
        tracing::info!(user = %user.id, account = %user.account_id, "console: user invited");
        Invited {
            user,
            link: format!(
                "{}/console/invite/{}",
                base_url.trim_end_matches('/'),
                self.secret
            ),
            expires_at: mediaparse_operator::rfc3339(self.expires),
        }
    }
}

/// The admin document's part for these two operations: `(paths, schemas)`,
/// merged into `docs/openapi-admin.json` by `http::openapi::admin_document`.
pub fn openapi() -> (Map<String, Value>, Map<String, Value>) {
    let errors = |invalid: &str| {
        let mut r = Map::new();
        for (status, text) in [
            ("400", invalid),
            (
                "401",
                "`invalid_token`: the operator token is missing or wrong.",
            ),
            (
                "404",
                "`not_found`: the admin API is off (no operator token configured).",
            ),
        ] {
            r.insert(
                status.into(),
                json!({
                    "description": text,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
                }),
            );
        }
        r
    };
    let success = |status: u16, description: &str, data: Value| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {
                "type": "object",
                "required": ["status", "data", "msg"],
                "properties": {
                    "status": {"type": "integer", "enum": [status]},
                    "data": data,
                    "msg": {"type": "string", "enum": ["success"]},
                },
                "additionalProperties": false,
            }}},
        })
    };
    let mut post_responses = errors(
        "`invalid_request`: the body is not `{account, email}`, the account id or the e-mail address is not valid, or the e-mail belongs to another account's user.",
    );
    post_responses.insert(
        "201".into(),
        success(
            201,
            "Invited: the user and the one-time link, shown only here.",
            json!({"$ref": "#/components/schemas/Invitation"}),
        ),
    );
    let mut get_responses = errors("`invalid_request`: an unknown query parameter.");
    get_responses.insert(
        "200".into(),
        success(
            200,
            "The users, oldest first.",
            json!({"type": "array", "items": {"$ref": "#/components/schemas/ConsoleUser"}}),
        ),
    );
    let mut paths = Map::new();
    paths.insert(
        "/api/v1/admin/users".into(),
        json!({
            "post": {
                "tags": ["admin"],
                "operationId": "inviteUser",
                "summary": "Invite a console user",
                "description": "Creates the user in the account (the account too, if missing) and answers a one-time link to set a password, valid 7 days. Inviting a known user again issues a new link and voids the old one: the way to reset a password (accepting it ends every session of the user).",
                "security": [{"operatorToken": []}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object",
                    "required": ["account", "email"],
                    "properties": {
                        "account": {"type": "string", "description": "Account id (created if missing)."},
                        "email": {"type": "string", "description": "The user's e-mail address, the sign-in name."},
                    },
                    "additionalProperties": false,
                }}}},
                "responses": post_responses,
            },
            "get": {
                "tags": ["admin"],
                "operationId": "listUsers",
                "summary": "List console users",
                "description": "Every user, or those of one account. Never a secret: no password hash, no link.",
                "security": [{"operatorToken": []}],
                "parameters": [{"name": "account", "in": "query", "required": false, "schema": {"type": "string"}, "description": "Only this account's users."}],
                "responses": get_responses,
            },
        }),
    );
    let mut schemas = Map::new();
    schemas.insert(
        "ConsoleUser".into(),
        json!({
            "type": "object",
            "required": ["id", "accountId", "email", "active", "createdAt"],
            "properties": {
                "id": {"type": "string"},
                "accountId": {"type": "string"},
                "email": {"type": "string"},
                "active": {"type": "boolean", "description": "A password was set (`false`: invited, not yet accepted)."},
                "createdAt": {"type": "integer", "description": "Unix seconds."},
            },
            "additionalProperties": false,
        }),
    );
    schemas.insert(
        "Invitation".into(),
        json!({
            "type": "object",
            "required": ["user", "link", "expiresAt"],
            "properties": {
                "user": {"$ref": "#/components/schemas/ConsoleUser"},
                "link": {"type": "string", "format": "uri", "description": "One-time link to set the password (under the service's public base URL)."},
                "expiresAt": {"type": "string", "format": "date-time"},
            },
            "additionalProperties": false,
        }),
    );
    (paths, schemas)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateUser {
    account: String,
    email: String,
}

serde_body!(CreateUser);

async fn create(
    State(state): State<Arc<AppState>>,
    JsonBody(b): JsonBody<CreateUser>,
) -> Result<Response, ApiError> {
    let invited = invite(&state, &b.account, &b.email)
        .await
        .map_err(ApiError::invalid_request)?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"status": 201, "data": invited, "msg": "success"})),
    )
        .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    account: Option<String>,
}

async fn list(
    State(state): State<Arc<AppState>>,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid_request(format!("invalid query: {e}")))?;
    let users = state
        .services
        .store
        .users_async(q.account.as_deref())
        .await
        .map_err(internal)?;
    Ok(axum::Json(json!({"status": 200, "data": users, "msg": "success"})).into_response())
}
