//! The note page: what its status and redirects say, and where the note
//! sits in its `window.__INITIAL_STATE__` (desktop) or mobile state.

use mediaparse_sdk::serde_json::Value;
use mediaparse_sdk::{Failure, HttpResponse, Result, html, jsobj};

use crate::urls::NoteRef;

/// What a fetched note page holds, before its state is parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Screen {
    /// An ordinary page with a state assignment.
    State,
    /// An ordinary 200 page without any known state (layout change).
    NoState,
}

pub const DESKTOP_STATE: &str = "window.__INITIAL_STATE__";
pub const MOBILE_SETUP_STATE: &str = "window.__SETUP_SERVER_STATE__";

/// Classify a note page answer; failures are the guide's error signals.
/// `with_cookie`: the request carried the operator's session cookie.
pub fn screen(response: &HttpResponse, note: &NoteRef, with_cookie: bool) -> Result<Screen> {
    if response.is_redirect() {
        return Err(redirect_failure(
            response.location().as_deref().unwrap_or(""),
            note,
            with_cookie,
        ));
    }
    match response.status {
        200..=299 => {}
        404 | 410 => return Err(unavailable(note)),
        429 | 461 | 471 => {
            return Err(Failure::RateLimited(format!(
                "Xiaohongshu answered {} (risk control)",
                response.status
            )));
        }
        s => {
            return Err(Failure::upstream(format!(
                "Xiaohongshu answered the note page with status {s}"
            )));
        }
    }
    let body = response.text();
    if body.contains(DESKTOP_STATE) || body.contains(MOBILE_SETUP_STATE) {
        Ok(Screen::State)
    } else if body.contains("website-login/captcha") || body.contains("verifyUuid") {
        Err(captcha())
    } else {
        Ok(Screen::NoState)
    }
}

fn captcha() -> Failure {
    Failure::RateLimited("Xiaohongshu asked for a captcha (risk control)".into())
}

/// A redirect away from the note: captcha, login, the 404 page (gone), or
/// the home page (gone, or shown only to signed-in users).
pub fn redirect_failure(location: &str, note: &NoteRef, with_cookie: bool) -> Failure {
    let lower = location.to_ascii_lowercase();
    let path = lower
        .split_once("://")
        .map(|(_, rest)| rest.split_once('/').map(|(_, p)| p).unwrap_or(""))
        .unwrap_or(lower.trim_start_matches('/'));
    let path = path.split('?').next().unwrap_or("");
    if path.contains("captcha") || path.contains("verify") {
        captcha()
    } else if path.contains("login") {
        Failure::LoginRequired(
            "Xiaohongshu shows this note only to a signed-in session (configure `cookie`)".into(),
        )
    } else if path.starts_with("404") {
        unavailable(note)
    } else {
        withheld(note, with_cookie)
    }
}

/// A page that shows no note although the link carried its token. Some
/// notes are shown only to signed-in users: an anonymous request (no
/// operator cookie) gets the home page or an empty note map for them, so
/// that is a login wall; with a signed-in cookie the note is gone.
pub fn withheld(note: &NoteRef, signed_in: bool) -> Failure {
    if note.xsec_token.is_some() && !signed_in {
        Failure::LoginRequired(
            "Xiaohongshu shows this note only to a signed-in session, or it is gone (configure `cookie` to tell)"
                .into(),
        )
    } else {
        unavailable(note)
    }
}

/// Whether the page's state says its session is not signed in
/// (`user.loggedIn: false`): an operator cookie that no longer signs in.
pub fn signed_out(page: &str) -> bool {
    matches!(
        last_state(page, DESKTOP_STATE),
        Some(Ok(state)) if state.pointer("/user/loggedIn") == Some(&Value::Bool(false))
    )
}

/// The note is gone, private, or its token is missing or expired.
pub fn unavailable(note: &NoteRef) -> Failure {
    match note.xsec_token {
        Some(_) => {
            Failure::unavailable("the note is deleted, private, or its xsec_token has expired")
        }
        None => Failure::unavailable(
            "Xiaohongshu refused the note: use the share link with its xsec_token",
        ),
    }
}

/// The JS value assigned to `name` by the last script that assigns it.
fn last_state(page: &str, name: &str) -> Option<std::result::Result<Value, String>> {
    let mut end = page.len();
    while let Some(pos) = page[..end].rfind(name) {
        if let Some(text) = html::assigned_value(&page[pos..], name) {
            return Some(jsobj::parse(text).map_err(|e| e.to_string()));
        }
        end = pos;
    }
    None
}

/// The note object for `id` in a page's state, desktop or mobile layout.
/// `Ok(None)`: the state parsed but holds no such note.
pub fn find_note(page: &str, id: &str) -> Result<Option<Value>> {
    let states: Vec<_> = [DESKTOP_STATE, MOBILE_SETUP_STATE]
        .into_iter()
        .filter_map(|name| last_state(page, name))
        .collect();
    let parsed: Vec<Value> = states
        .iter()
        .filter_map(|s| s.as_ref().ok().cloned())
        .collect();
    if parsed.is_empty() {
        let why = states
            .into_iter()
            .find_map(|s| s.err())
            .unwrap_or_else(|| "no state assignment".into());
        return Err(Failure::changed(format!(
            "the note page state could not be read: {why}"
        )));
    }
    for state in &parsed {
        let mut candidates: Vec<&Value> = Vec::new();
        if let Some(map) = state
            .pointer("/note/noteDetailMap")
            .and_then(Value::as_object)
        {
            candidates.extend(map.get(id).and_then(|e| e.get("note")));
            // Under another key only when the note names itself as `id`.
            candidates.extend(
                map.values()
                    .rev()
                    .filter_map(|e| e.get("note"))
                    .filter(|n| note_id(n).is_some()),
            );
        }
        candidates.extend(state.pointer("/noteData/data/noteData"));
        candidates.extend(state.pointer("/LAUNCHER_SSR_STORE_PAGE_DATA/noteData"));
        if let Some(note) = candidates.into_iter().find(|n| is_note(n, id)) {
            return Ok(Some(note.clone()));
        }
    }
    Ok(None)
}

fn note_id(note: &Value) -> Option<&str> {
    ["noteId", "note_id", "id"]
        .into_iter()
        .find_map(|k| note.get(k))
        .and_then(Value::as_str)
}

/// A non-empty note object whose own id (when it states one) is `id`.
fn is_note(note: &Value, id: &str) -> bool {
    let Some(obj) = note.as_object() else {
        return false;
    };
    let has_content = obj.contains_key("type")
        || obj.contains_key("imageList")
        || obj.contains_key("images_list");
    has_content && note_id(note).is_none_or(|n| n.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(token: bool) -> NoteRef {
        NoteRef {
            id: "6411cf99000000001300b6d9".into(),
            xsec_token: token.then(|| "CB1=".into()),
            xsec_source: None,
        }
    }

    #[test]
    fn redirects_map_to_the_guides_signals() {
        let captcha = "https://www.xiaohongshu.com/website-login/captcha?redirectPath=https%3A%2F%2Fwww.xiaohongshu.com%2Fexplore%2F6422c2750000000027000d88&verifyUuid=4a1c&verifyType=102&verifyBiz=461";
        assert_eq!(
            redirect_failure(captcha, &note(true), false).code(),
            "upstream_rate_limited"
        );
        assert_eq!(
            redirect_failure("/404/sec_abc?error_code=300031", &note(true), false).code(),
            "content_unavailable"
        );
        assert_eq!(
            redirect_failure(
                "https://www.xiaohongshu.com/login?redirectPath=x",
                &note(true),
                true
            )
            .code(),
            "login_required"
        );
        assert!(
            redirect_failure("https://www.xiaohongshu.com/explore", &note(false), false)
                .message()
                .contains("xsec_token")
        );
        // The home page: a login wall for an anonymous request, gone for a
        // signed-in one.
        let home = "https://www.xiaohongshu.com/explore";
        assert_eq!(
            redirect_failure(home, &note(true), false).code(),
            "login_required"
        );
        assert_eq!(
            redirect_failure(home, &note(true), true).code(),
            "content_unavailable"
        );
    }

    #[test]
    fn signed_out_reads_the_state_user() {
        let state = |v: &str| {
            format!("<script>window.__INITIAL_STATE__={{\"user\":{{\"loggedIn\":{v}}}}}</script>")
        };
        assert!(signed_out(&state("false")));
        assert!(!signed_out(&state("true")));
        assert!(!signed_out("<html></html>"));
    }

    #[test]
    fn picks_the_last_state_and_the_requested_note() {
        let page = r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{}}}</script>
<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{"6411cf99000000001300b6d9":{"note":{"noteId":"6411cf99000000001300b6d9","type":"normal","desc":"undefined stays","x":undefined}}}}}</script>"#;
        let found = find_note(page, "6411cf99000000001300b6d9")
            .unwrap()
            .unwrap();
        assert_eq!(found["desc"], "undefined stays");
        assert!(found["x"].is_null());
        assert_eq!(find_note(page, "6411cf99000000001300b6da").unwrap(), None);
    }

    #[test]
    fn unreadable_state_is_an_upstream_change() {
        let page = "<script>window.__INITIAL_STATE__={\"a\":</script>";
        assert_eq!(find_note(page, "x").unwrap_err().code(), "upstream_error");
    }
}
