//! Operator pages (`/console/admin`, signed in with the operator token):
//! accounts with balances, users and keys; granting or setting credits;
//! inviting users; extractors and egress status; recent failures.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde_json::Value;

use super::super::envelope::internal;
use super::super::state::AppState;
use super::customer::operator_call;
use super::form::Form;
use super::invite_api::invite;
use super::layout::{Flash, Nav, csrf_field, page, refusal, respond, shown_once, time};
use super::session::{Operator, csrf_ok};
use mediaparse_operator::{self as operator, OperatorError};
use mediaparse_registry::Reload;
use mediaparse_store::MAX_REASON_CHARS;

pub fn router() -> Router<Arc<AppState>> {
    Router::new()
        .route("/console/admin", get(accounts))
        .route("/console/admin/accounts/{id}", get(account))
        .route("/console/admin/accounts/{id}/credits", post(credits))
        .route("/console/admin/invite", post(invite_user))
        .route("/console/admin/extractors", get(extractors))
        .route("/console/admin/extractors/recheck", post(recheck))
        .route("/console/admin/failures", get(failures))
}

/// Rows of the grants log shown on an account's page.
const GRANTS_SHOWN: usize = 50;

fn csrf_refused() -> Response {
    refusal(
        StatusCode::FORBIDDEN,
        "Request refused",
        "This form did not carry this session's CSRF token. Reload the page and try again.",
    )
}

fn invite_form(csrf: &str, account: &str) -> Markup {
    html! {
        form method="post" action="/console/admin/invite" {
            (csrf_field(csrf))
            label for="inv-account" { "Account" }
            input #inv-account type="text" name="account" required value=(account);
            label for="inv-email" { "E-mail" }
            input #inv-email type="email" name="email" required;
            div { button type="submit" { "Invite (one-time link)" } }
        }
    }
}

async fn accounts_page(
    state: &AppState,
    o: &Operator,
    flash: Flash,
    extra: Option<Markup>,
    status: StatusCode,
) -> Response {
    let loaded = operator_call(state, async |s, _| {
        Ok((s.accounts_async().await?, s.users_async(None).await?))
    })
    .await;
    let (accounts, users) = match loaded {
        Ok(v) => v,
        Err(e) => return internal(e).into_response(),
    };
    let mut users_of: BTreeMap<&str, usize> = BTreeMap::new();
    for u in &users {
        *users_of.entry(u.account_id.as_str()).or_default() += 1;
    }
    let body = html! {
        @if let Some(extra) = extra { (extra) }
        div.scroll { table {
            thead { tr { th { "Account" } th { "Balance" } th { "Granted" } th { "Spent" } th { "Keys" } th { "Users" } th { "Created" } } }
            tbody {
                @for a in &accounts {
                    tr {
                        td { a href=(format!("/console/admin/accounts/{}", a.id)) { (a.id) } }
                        td { (a.balance) } td { (a.granted) } td { (a.spent) } td { (a.keys) }
                        td { (users_of.get(a.id.as_str()).copied().unwrap_or(0)) }
                        td { (time(a.created_at)) }
                    }
                }
                @if accounts.is_empty() { tr { td colspan="7" { "No accounts yet." } } }
            }
        } }
        h2 { "Invite a user" }
        (invite_form(&o.session.csrf, ""))
    };
    respond(
        status,
        page("Accounts", Nav::Operator, &o.session.csrf, &flash, body),
    )
}

async fn accounts(State(state): State<Arc<AppState>>, o: Operator) -> Response {
    accounts_page(&state, &o, Flash::None, None, StatusCode::OK).await
}

async fn account_page(
    state: &AppState,
    o: &Operator,
    id: String,
    flash: Flash,
    status: StatusCode,
) -> Response {
    let account = id.clone();
    let loaded = operator_call(state, async move |s, now| {
        Ok((
            operator::account(s, &account, now).await?,
            s.users_async(Some(&account)).await?,
            s.grants_async(&account, GRANTS_SHOWN).await?,
        ))
    })
    .await;
    let (view, users, grants) = match loaded {
        Ok(v) => v,
        Err(OperatorError::NotFound(..)) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "No such account",
                "There is no such account.",
            );
        }
        Err(e) => return internal(e).into_response(),
    };
    let body = html! {
        p.big { (view.account.balance) " credits" }
        p { "Granted " (view.account.granted) " · spent " (view.account.spent) }
        h2 { "Grant or set credits" }
        form method="post" action=(format!("/console/admin/accounts/{}/credits", view.account.id)) {
            (csrf_field(&o.session.csrf))
            fieldset {
                legend { "Change" }
                label.check { input type="radio" name="kind" value="add" checked; " Add" }
                label.check { input type="radio" name="kind" value="set"; " Set the balance to" }
            }
            label for="amount" { "Credits" }
            input #amount type="number" name="amount" min="0" required;
            label for="reason" { "Reason (kept in the grants log below)" }
            input #reason type="text" name="reason" required maxlength=(MAX_REASON_CHARS);
            div { button type="submit" { "Apply" } }
        }
        h2 { "Grants log" }
        p.muted { "Every change of the balance other than a charge, newest first (the last " (GRANTS_SHOWN) "). A set is recorded as the difference it made." }
        div.scroll { table #grants {
            thead { tr { th { "When" } th { "Kind" } th { "Credits" } th { "Reason" } } }
            tbody {
                @for g in &grants {
                    tr { td { (time(g.created_at)) } td { (g.kind) } td { (format!("{:+}", g.credits)) } td { (g.reason.as_deref().unwrap_or("—")) } }
                }
                @if grants.is_empty() { tr { td colspan="4" { "No grants yet." } } }
            }
        } }
        h2 { "Users" }
        div.scroll { table {
            thead { tr { th { "E-mail" } th { "State" } th { "Created" } } }
            tbody {
                @for u in &users { tr { td { (u.email) } td { @if u.active { "active" } @else { "invited" } } td { (time(u.created_at)) } } }
                @if users.is_empty() { tr { td colspan="3" { "No users." } } }
            }
        } }
        (invite_form(&o.session.csrf, &view.account.id))
        h2 { "Keys" }
        div.scroll { table {
            thead { tr { th { "Name" } th { "Token" } th { "Platforms" } th { "Expires" } th { "Status" } } }
            tbody {
                @for k in &view.key_list {
                    tr { td { (k.name) } td { code { (k.token_prefix) "…" } } td { (k.platforms.to_string()) } td { (k.expires_on.as_deref().unwrap_or("never")) } td { (k.status) } }
                }
            }
        } }
        p { a href="/console/admin" { "All accounts" } }
    };
    respond(
        status,
        page(
            &format!("Account {id}"),
            Nav::Operator,
            &o.session.csrf,
            &flash,
            body,
        ),
    )
}

async fn account(
    State(state): State<Arc<AppState>>,
    o: Operator,
    Path(id): Path<String>,
) -> Response {
    account_page(&state, &o, id, Flash::None, StatusCode::OK).await
}

async fn credits(
    State(state): State<Arc<AppState>>,
    o: Operator,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let form = Form::parse(&body);
    if !csrf_ok(&o.session, &form) {
        return csrf_refused();
    }
    let reason = form.get("reason").trim().to_string();
    let Ok(amount) = form.get("amount").parse::<i64>() else {
        return account_page(
            &state,
            &o,
            id,
            Flash::Error("Credits must be a whole number.".into()),
            StatusCode::BAD_REQUEST,
        )
        .await;
    };
    if reason.is_empty() {
        return account_page(
            &state,
            &o,
            id,
            Flash::Error("Give a reason.".into()),
            StatusCode::BAD_REQUEST,
        )
        .await;
    }
    let set = form.get("kind") == "set";
    let account = id.clone();
    let changed = operator_call(&state, async move |s, now| {
        if set {
            operator::set_credits(s, &account, amount, Some(&reason), now).await
        } else {
            operator::add_credits(s, &account, amount, Some(&reason), now).await
        }
    })
    .await;
    match changed {
        Ok(change) => {
            tracing::info!(account = %change.account, change = change.change, balance = change.balance, "console: credits changed by the operator");
            let flash = Flash::Ok(format!(
                "Balance {} → {} ({:+}).",
                change.previous, change.balance, change.change
            ));
            account_page(&state, &o, id, flash, StatusCode::OK).await
        }
        Err(OperatorError::Invalid(m)) => {
            account_page(&state, &o, id, Flash::Error(m), StatusCode::BAD_REQUEST).await
        }
        Err(e) => internal(e).into_response(),
    }
}

async fn invite_user(State(state): State<Arc<AppState>>, o: Operator, body: Bytes) -> Response {
    let form = Form::parse(&body);
    if !csrf_ok(&o.session, &form) {
        return csrf_refused();
    }
    match invite(&state, form.get("account"), form.get("email")).await {
        Ok(invited) => {
            let shown = html! {
                p { "Send this one-time link to " (invited.user.email) "; it sets a password and expires " (invited.expires_at) "." }
                (shown_once("invite-link", &invited.link))
            };
            accounts_page(
                &state,
                &o,
                Flash::Ok("User invited.".into()),
                Some(shown),
                StatusCode::CREATED,
            )
            .await
        }
        Err(m) => accounts_page(&state, &o, Flash::Error(m), None, StatusCode::BAD_REQUEST).await,
    }
}

fn text(v: &Value, f: &str) -> String {
    match v.get(f) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "—".into(),
        Some(other) => other.to_string(),
    }
}

async fn extractors(State(state): State<Arc<AppState>>, o: Operator) -> Response {
    extractors_page(&state, &o, Flash::None, None)
}

/// Re-scan the extractors folder now, through the registry's own reload
/// (the watcher's), and show what each platform file did.
async fn recheck(State(state): State<Arc<AppState>>, o: Operator, body: Bytes) -> Response {
    if !csrf_ok(&o.session, &Form::parse(&body)) {
        return csrf_refused();
    }
    let registry = state.services.registry.clone();
    // Blocks: reads and compiles the extractors' WebAssembly (not a store call).
    let outcomes = match tokio::task::spawn_blocking(move || registry.rescan()).await {
        Ok(Some(Ok(outcomes))) => outcomes,
        Ok(Some(Err(e))) => {
            let flash = Flash::Error(format!("Cannot read the extractors folder: {e}"));
            return extractors_page(&state, &o, flash, None);
        }
        Ok(None) => {
            let flash = Flash::Error("This service loaded no extractors folder.".into());
            return extractors_page(&state, &o, flash, None);
        }
        Err(e) => return internal(e).into_response(),
    };
    let failed = outcomes
        .iter()
        .filter(|(_, r)| matches!(r, Reload::Failed { .. }))
        .count();
    tracing::info!(
        files = outcomes.len(),
        failed,
        "console: extractors re-checked by the operator"
    );
    let report = html! {
        h2 { "Re-check" }
        div.scroll { table #recheck {
            thead { tr { th { "Platform file" } th { "Result" } } }
            tbody {
                @for (stem, outcome) in &outcomes {
                    tr {
                        td { (stem) }
                        td {
                            @match outcome {
                                Reload::Loaded { version, .. } => { "loaded (version " (version) ")" },
                                Reload::Unchanged => "unchanged",
                                Reload::Failed { message, .. } => span.expired { "error: " (message) },
                                Reload::Removed { .. } => "not served (no component file)",
                            }
                        }
                    }
                }
                @if outcomes.is_empty() { tr { td colspan="2" { "The folder holds no platform files." } } }
            }
        } }
    };
    let flash = if failed == 0 {
        Flash::Ok(format!("Re-checked {} platform files.", outcomes.len()))
    } else {
        Flash::Error(format!(
            "Re-checked {} platform files: {failed} refused (the previous component, if any, keeps serving).",
            outcomes.len()
        ))
    };
    extractors_page(&state, &o, flash, Some(report))
}

fn extractors_page(
    state: &AppState,
    o: &Operator,
    flash: Flash,
    report: Option<Markup>,
) -> Response {
    let listing = super::super::admin_extractors::listing(state);
    let list = listing
        .get("extractors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let body = html! {
        p.muted { "As " code { "GET /api/v1/admin/extractors" } " reports it. Reloads happen by themselves when a file changes; re-check scans the folder now, the same way." }
        form method="post" action="/console/admin/extractors/recheck" {
            (csrf_field(&o.session.csrf))
            button type="submit" { "Re-check the extractors folder" }
        }
        @if let Some(report) = report { (report) }
        div.scroll { table {
            thead { tr { th { "Platform" } th { "Status" } th { "Version" } th { "WIT" } th { "Loaded at" } th { "Last error" } th { "Egress" } } }
            tbody {
                @for e in &list {
                    tr {
                        td { (text(e, "platform")) }
                        td { (text(e, "status")) }
                        td { (text(e, "version")) }
                        td { (text(e, "witVersion")) }
                        td { (text(e, "loadedAt")) }
                        td { @match e.get("lastError").and_then(|x| x.get("message")) { Some(m) => span.expired { (m.as_str().unwrap_or("")) }, None => "—" } }
                        td { (egress(e.get("exits"))) }
                    }
                }
            }
        } }
        h2 { "Configuration" }
        pre { (serde_json::to_string_pretty(listing.get("config").unwrap_or(&Value::Null)).unwrap_or_default()) }
    };
    respond(
        StatusCode::OK,
        page("Extractors", Nav::Operator, &o.session.csrf, &flash, body),
    )
}

/// Exit health per label (requests, cooling); plainly "not reported" when absent.
fn egress(exits: Option<&Value>) -> Markup {
    let Some(list) = exits.and_then(Value::as_array).filter(|l| !l.is_empty()) else {
        return html! { span.muted { "not reported" } };
    };
    html! {
        @for x in list {
            div {
                (text(x, "label")) ": " (text(x, "requests"))
                (if x.get("requests").and_then(Value::as_u64) == Some(1) { " request" } else { " requests" })
                @if x.get("cooling").and_then(Value::as_bool) == Some(true) { " · " span.expired { "cooling until " (text(x, "coolingUntil")) } }
            }
        }
    }
}

/// Failed parses by platform and code since the service started, read from
/// its own metrics (`mediaparse_parses_total`, outcomes other than `ok`).
fn failure_counts(metrics: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("mediaparse_parses_total{"))
    {
        let label = |name: &str| {
            let start = line.find(&format!("{name}=\""))? + name.len() + 2;
            let end = line[start..].find('"')? + start;
            Some(line[start..end].to_string())
        };
        let count = line
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse::<f64>().ok())
            .unwrap_or(0.0);
        if let (Some(platform), Some(outcome)) = (label("platform"), label("outcome"))
            && outcome != "ok"
            && count > 0.0
        {
            out.insert((platform, outcome), count as u64);
        }
    }
    out
}

async fn failures(State(state): State<Arc<AppState>>, o: Operator) -> Response {
    let counts = failure_counts(&mediaparse_metrics::global().encode());
    let dir = state
        .services
        .failures
        .as_ref()
        .map(|sink| sink.dir().to_path_buf());
    // Blocks: reads the kept failure files on disk (not a store call).
    let kept = tokio::task::spawn_blocking(move || {
        dir.map(|d| mediaparse_authoring::failures::list(&d, None))
            .transpose()
    })
    .await
    .ok()
    .and_then(Result::ok)
    .flatten()
    .unwrap_or_default();
    let body = html! {
        h2 { "Kept as fixture cases" }
        p.muted { "The last failing parses of each platform whose extractor reported a platform-side code, kept with their upstream exchanges (secrets scrubbed). Export one as a fixture case with the command shown; " code { "mediaparse replay <folder>" } " then reproduces the failure. Also " code { "GET /api/v1/admin/failures" } "." }
        div.scroll { table {
            thead { tr { th { "When" } th { "Platform" } th { "Code" } th { "Input" } th { "Export" } } }
            tbody {
                @for f in &kept { tr {
                    td { (mediaparse_core::clock::rfc3339(f.at_unix_s)) }
                    td { (f.platform) }
                    td { code { (f.code) } }
                    td { (f.input) }
                    td { code { (super::super::health::export_command(&f.id)) } }
                } }
                @if kept.is_empty() { tr { td colspan="5" { "No failing parse kept." } } }
            }
        } }
        h2 { "Counts since start" }
        p.muted { "Parses that did not succeed, by platform and code, since this process started (from " code { "/metrics" } "). Failures are never charged." }
        div.scroll { table {
            thead { tr { th { "Platform" } th { "Code" } th { "Count" } } }
            tbody {
                @for ((p, code), n) in &counts { tr { td { (p) } td { code { (code) } } td { (n) } } }
                @if counts.is_empty() { tr { td colspan="3" { "No failures since start." } } }
            }
        } }
    };
    respond(
        StatusCode::OK,
        page(
            "Recent failures",
            Nav::Operator,
            &o.session.csrf,
            &Flash::None,
            body,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_read_from_the_metrics_text() {
        let text = "# HELP x\nmediaparse_parses_total{platform=\"tiktok\",outcome=\"ok\"} 4\n\
                    mediaparse_parses_total{platform=\"tiktok\",outcome=\"content_unavailable\"} 2\n\
                    mediaparse_parse_duration_seconds_count{platform=\"x\"} 9\n";
        let counts = failure_counts(text);
        assert_eq!(counts.len(), 1);
        assert_eq!(counts[&("tiktok".into(), "content_unavailable".into())], 2);
    }
}
