//! The note page: what its status and redirects say, and where the note
//! sits in its `window.__INITIAL_STATE__` (desktop) or mobile state.

use std::borrow::Cow;

use mediaparse_sdk::fields::{self, RawValue, kind_of};
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
    if html::contains(&body, DESKTOP_STATE) || html::contains(&body, MOBILE_SETUP_STATE) {
        Ok(Screen::State)
    } else if html::contains(&body, "website-login/captcha") || html::contains(&body, "verifyUuid")
    {
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
    let state = last_state(page, DESKTOP_STATE);
    let root: Option<&RawValue> = match &state {
        Some(State::Json(json)) => Some(json),
        Some(State::Converted(text)) => serde_json::from_str(text).ok(),
        None => None,
    };
    fields::at(root, &["user", "loggedIn"]).is_some_and(|v| v.get() == "false")
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
enum State<'p> {
    /// It is JSON as written (read in place).
    Json(&'p RawValue),
    /// Its JS literals converted to JSON (not yet checked to be JSON).
    Converted(String),
}

fn last_state<'p>(page: &'p str, name: &str) -> Option<State<'p>> {
    let text = last_assigned(page, name)?;
    // A JS literal (`undefined`) stops this read early.
    Some(match serde_json::from_str::<&RawValue>(text) {
        Ok(json) => State::Json(json),
        Err(_) => State::Converted(jsobj::to_json(text)),
    })
}

/// The text of the value the last script that assigns `name` assigns.
fn last_assigned<'p>(page: &'p str, name: &str) -> Option<&'p str> {
    let mut end = page.len();
    while let Some(pos) = page[..end].rfind(name) {
        if let Some(text) = html::assigned_value(&page[pos..], name) {
            return Some(text);
        }
        end = pos;
    }
    None
}

/// The JSON text of the note object for `id` in a page's state, desktop or
/// mobile layout. `Ok(None)`: the state parsed but holds no such note.
pub fn find_note(page: &str, id: &str) -> Result<Option<String>> {
    let texts: Vec<&str> = [DESKTOP_STATE, MOBILE_SETUP_STATE]
        .into_iter()
        .filter_map(|name| last_assigned(page, name))
        .collect();
    // Each state read as written finds its places in the one pass; one
    // that is no JSON (a JS literal such as `undefined`) is read again with
    // its literals converted.
    let as_written: Vec<Option<Places>> = texts.iter().map(|t| Places::of(t).ok()).collect();
    let converted: Vec<Option<String>> = texts
        .iter()
        .zip(&as_written)
        .map(|(text, read)| read.is_none().then(|| jsobj::to_json(text)))
        .collect();
    let mut why = None;
    let mut parsed: Vec<Places> = Vec::new();
    for (read, converted) in as_written.into_iter().zip(&converted) {
        match (read, converted) {
            (Some(places), _) => parsed.push(places),
            (None, Some(text)) => match Places::of(text) {
                Ok(places) => parsed.push(places),
                Err(e) => {
                    why.get_or_insert_with(|| e.to_string());
                }
            },
            (None, None) => {}
        }
    }
    if parsed.is_empty() {
        let why = why.unwrap_or_else(|| "no state assignment".into());
        return Err(Failure::changed(format!(
            "the note page state could not be read: {why}"
        )));
    }
    for places in parsed {
        if let Some(note) = note_in(places, id) {
            return Ok(Some(note.get().to_string()));
        }
    }
    Ok(None)
}

/// The state's members that may hold the note, read in the one pass that
/// checks the state is JSON.
#[derive(serde::Deserialize)]
struct Places<'a> {
    #[serde(borrow, default, deserialize_with = "fields::raw")]
    note: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "noteData", deserialize_with = "fields::raw")]
    note_data: Option<&'a RawValue>,
    #[serde(
        borrow,
        default,
        rename = "LAUNCHER_SSR_STORE_PAGE_DATA",
        deserialize_with = "fields::raw"
    )]
    launcher: Option<&'a RawValue>,
}

impl<'a> Places<'a> {
    /// The places of the state `text`; its error when it is no JSON.
    fn of(text: &'a str) -> serde_json::Result<Places<'a>> {
        match serde_json::from_str::<Places>(text) {
            Ok(places) => Ok(places),
            // A name given twice (the last counts) or no object: one at a time.
            Err(_) => {
                let state: &RawValue = serde_json::from_str(text)?;
                Ok(Places {
                    note: fields::at(Some(state), &["note"]),
                    note_data: fields::at(Some(state), &["noteData"]),
                    launcher: fields::at(Some(state), &["LAUNCHER_SSR_STORE_PAGE_DATA"]),
                })
            }
        }
    }
}

/// The note `id` in one state: the first of its places that holds it,
/// each looked at only when the ones before it did not.
fn note_in<'a>(places: Places<'a>, id: &str) -> Option<&'a RawValue> {
    let found = |n: &&RawValue| is_note(n, id);
    if let Some(map) = fields::at(places.note, &["noteDetailMap"]).and_then(members) {
        let by_key = get(&map, id).and_then(|e| fields::at(Some(e), &["note"]));
        if let Some(note) = by_key.filter(found) {
            return Some(note);
        }
        // Under another key only when the note names itself as `id`.
        let named = map
            .iter()
            .rev()
            .filter_map(|(_, e)| fields::at(Some(e), &["note"]))
            .filter(|n| members(n).is_some_and(|m| note_id(&m).is_some()))
            .find(found);
        if named.is_some() {
            return named;
        }
    }
    fields::at(places.note_data, &["data", "noteData"])
        .filter(found)
        .or_else(|| fields::at(places.launcher, &["noteData"]).filter(found))
}

/// The members of an object in their order, a name given twice once (its
/// last value, at its first place); `None` when `raw` is not an object.
pub fn members(raw: &RawValue) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    members_in(raw.get())
}

/// The members of the object the JSON `text` holds, as [`members`] reads
/// them; `None` when it is not JSON or holds no object. One pass: the text
/// is not checked as a whole first.
pub fn members_in(text: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    let all = fields::Object::from_text(text, "the object")
        .ok()?
        .into_members();
    let mut out: Vec<(Cow<str>, &RawValue)> = Vec::with_capacity(all.len());
    for (name, value) in all {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => out.push((name, value)),
        }
    }
    Some(out)
}

/// The member `name` of a member list.
pub fn get<'a>(members: &[(Cow<str>, &'a RawValue)], name: &str) -> Option<&'a RawValue> {
    members.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// A JSON string's value; `None` for any other value.
pub fn as_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    if kind_of(raw) != b'"' {
        return None;
    }
    serde_json::from_str::<fields::Text>(raw.get())
        .ok()
        .map(|t| t.0)
}

fn note_id<'a>(note: &[(Cow<str>, &'a RawValue)]) -> Option<Cow<'a, str>> {
    ["noteId", "note_id", "id"]
        .into_iter()
        .find_map(|k| get(note, k))
        .and_then(as_str)
}

/// A non-empty note object whose own id (when it states one) is `id`.
fn is_note(note: &RawValue, id: &str) -> bool {
    let Some(obj) = members(note) else {
        return false;
    };
    let has_content = ["type", "imageList", "images_list"]
        .into_iter()
        .any(|k| get(&obj, k).is_some());
    has_content && note_id(&obj).is_none_or(|n| n.eq_ignore_ascii_case(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Pages whose state holds (or does not hold) note `6411cf99000000001300b6d9`.
    const STATE_PAGES: &[&str] = &[
        r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{"6411cf99000000001300b6d9":{"note":{"noteId":"6411cf99000000001300b6d9","type":"normal","desc":"a"}}}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{"6411cf99000000001300b6d9":{"note":{"noteId":"6411cf99000000001300b6d9","type":"normal","x":undefined}}}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{}},"note":{"noteDetailMap":{"6411cf99000000001300b6d9":{"note":{"type":"video"}}}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{"k":{"note":{"id":"6411cf99000000001300b6d9","imageList":[]}}}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"noteData":{"data":{"noteData":{"noteId":"6411cf99000000001300b6d9","type":"normal"}}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"noteData":{"data":{"noteData":{"noteId":"other","type":"normal"}}},"x":undefined}</script>"#,
        r#"<script>window.__INITIAL_STATE__=[{"note":{}}]</script>"#,
        r#"<script>window.__INITIAL_STATE__={"a":</script>"#,
        r#"<script>window.__INITIAL_STATE__={"a":</script><script>window.__SETUP_SERVER_STATE__={"LAUNCHER_SSR_STORE_PAGE_DATA":{"noteData":{"noteId":"6411cf99000000001300b6d9","type":"normal"}}}</script>"#,
        r#"<script>window.__SETUP_SERVER_STATE__={"LAUNCHER_SSR_STORE_PAGE_DATA":{"noteData":{"note_id":"6411cf99000000001300b6d9","images_list":[],"u":undefined}},"LAUNCHER_SSR_STORE_PAGE_DATA":{"noteData":{}}}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"note":{"noteDetailMap":{"6411cf99000000001300b6d9":{"note":{}}}}}</script>"#,
        r#"<html>no state</html>"#,
        r#"<script>window.__INITIAL_STATE__={"a":1 2}</script>"#,
        r#"<script>window.__INITIAL_STATE__={"a":1 2}</script><script>window.__SETUP_SERVER_STATE__={"LAUNCHER_SSR_STORE_PAGE_DATA":{"noteData":{"noteId":"6411cf99000000001300b6d9","type":"normal"}}}</script>"#,
    ];

    /// Where the note is found in a table of pages: JS literals converted,
    /// names given twice (the last counts), a state that is no object or no
    /// JSON, and a second state.
    #[test]
    fn states_are_read_once() {
        let expected = [
            r#"note {"noteId":"6411cf99000000001300b6d9","type":"normal","desc":"a"}"#,
            r#"note {"noteId":"6411cf99000000001300b6d9","type":"normal","x":null}"#,
            r#"note {"type":"video"}"#,
            r#"note {"id":"6411cf99000000001300b6d9","imageList":[]}"#,
            r#"note {"noteId":"6411cf99000000001300b6d9","type":"normal"}"#,
            "none",
            "none",
            "failed upstream_error the note page state could not be read: no state assignment",
            r#"note {"noteId":"6411cf99000000001300b6d9","type":"normal"}"#,
            "none",
            "none",
            "failed upstream_error the note page state could not be read: no state assignment",
            "failed upstream_error the note page state could not be read: expected `,` or `}` at line 1 column 8",
            r#"note {"noteId":"6411cf99000000001300b6d9","type":"normal"}"#,
        ];
        for (page, expected) in STATE_PAGES.iter().zip(expected) {
            let verdict = match find_note(page, "6411cf99000000001300b6d9") {
                Ok(Some(note)) => format!("note {note}"),
                Ok(None) => "none".to_string(),
                Err(f) => format!("failed {} {}", f.code(), f.message()),
            };
            assert_eq!(verdict, expected, "{page}");
        }
    }

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
        let found: serde_json::Value = serde_json::from_str(&found).unwrap();
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
