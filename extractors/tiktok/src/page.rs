//! Reading one answer to the post-page request (guide §3–§6): the
//! rehydration blob, its status codes, the WAF challenge, redirects.

use std::collections::HashMap;

use mediaparse_sdk::fields::{self, Object, RawValue, Text};
use mediaparse_sdk::html::script_by_id;
use mediaparse_sdk::serde_json::{self, Value};
use mediaparse_sdk::{Failure, HttpResponse, Result};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::challenge;

/// What one page answer says.
#[derive(Debug)]
pub enum Page<'h> {
    /// The post's `itemStruct`, its members found in the pass that read
    /// the page's data (read by `map`).
    Item(Object<'h>),
    /// The WAF proof-of-work page.
    Challenge,
    /// A page without the post's data and without a challenge; `canonical`
    /// is the page's own canonical URL when it names one (`seo.abtest`).
    NoData { canonical: Option<String> },
    /// A 3xx to this location.
    Redirect(String),
}

#[derive(Deserialize)]
struct Universal<'a> {
    #[serde(rename = "__DEFAULT_SCOPE__", default, borrow)]
    scope: Scope<'a>,
}

#[derive(Deserialize, Default)]
struct Scope<'a> {
    #[serde(rename = "webapp.video-detail", borrow)]
    detail: Option<VideoDetail<'a>>,
    #[serde(rename = "seo.abtest")]
    seo: Option<SeoAbtest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VideoDetail<'a> {
    #[serde(default)]
    status_code: Value,
    #[serde(default)]
    status_msg: Option<String>,
    #[serde(default, borrow)]
    item_info: Option<ItemInfo<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemInfo<'a> {
    /// Only ever an object; anything else is no item.
    #[serde(default, borrow, deserialize_with = "fields::object_members")]
    item_struct: Option<Object<'a>>,
}

/// `SIGI_STATE`: the posts by id (`ItemModule`, read only when it is an object).
#[derive(Deserialize)]
struct Sigi<'a> {
    #[serde(rename = "ItemModule", default, borrow)]
    item_module: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SeoAbtest {
    #[serde(default)]
    canonical: Option<String>,
}

/// Read one page answer for post `id`; `html` is its text (the post's
/// item is read in place from it).
pub fn analyze<'h>(response: &HttpResponse, html: &'h str, id: &str) -> Result<Page<'h>> {
    if response.is_redirect() {
        return response.location().map(Page::Redirect).ok_or_else(|| {
            Failure::upstream("TikTok redirected the post page without a Location")
        });
    }
    if let Some(blob) = script_by_id(html, "__UNIVERSAL_DATA_FOR_REHYDRATION__") {
        return from_universal(blob);
    }
    if let Some(blob) = script_by_id(html, "SIGI_STATE") {
        return from_sigi(blob, id);
    }
    if challenge::is_challenge(html) {
        return Ok(Page::Challenge);
    }
    match response.status {
        200..=299 => Ok(Page::NoData { canonical: None }),
        404 | 410 => Err(Failure::unavailable(
            "TikTok answered 404 for the post page",
        )),
        403 | 429 => Err(Failure::RateLimited(format!(
            "TikTok refused the post page (HTTP {})",
            response.status
        ))),
        status => Err(Failure::upstream(format!(
            "TikTok answered HTTP {status} for the post page"
        ))),
    }
}

fn from_universal(blob: &str) -> Result<Page<'_>> {
    let universal: Universal = fields::from_text(blob, "rehydration data")?;
    let canonical = universal.scope.seo.and_then(|s| s.canonical);
    let Some(detail) = universal.scope.detail else {
        return Ok(Page::NoData { canonical });
    };
    let code = status_code(&detail.status_code);
    let msg = detail.status_msg.unwrap_or_default();
    let item = detail.item_info.and_then(|i| i.item_struct);
    check_status(code, &msg, item.is_some())?;
    Ok(match item {
        Some(item) => Page::Item(item),
        None => Page::NoData { canonical },
    })
}

/// Older pages: `<script id="SIGI_STATE">` with the post at `ItemModule[id]`.
fn from_sigi<'h>(blob: &'h str, id: &str) -> Result<Page<'h>> {
    // Any JSON is a SIGI_STATE; one without an `ItemModule` object has no post.
    let module = match serde_json::from_str::<Sigi>(blob) {
        Ok(state) => state.item_module,
        Err(_) => {
            fields::from_text::<IgnoredAny>(blob, "SIGI_STATE")?;
            None
        }
    };
    let posts = module.and_then(|m| serde_json::from_str::<HashMap<Text, &RawValue>>(m.get()).ok());
    let item = posts
        .as_ref()
        .and_then(|posts| posts.get(&Text(id.into())))
        .and_then(|raw| Object::of(raw));
    Ok(match item {
        Some(item) => Page::Item(item),
        None => Page::NoData { canonical: None },
    })
}

/// `statusCode` as a number (it has been seen as a number; accept a string).
fn status_code(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(-1),
        Value::String(s) => s.trim().parse().unwrap_or(-1),
        _ => 0,
    }
}

/// Statuses TikTok also gives whole datacenter networks (guide §3).
const NETWORK_BLOCK_CODES: [i64; 2] = [10204, 10231];

/// Does an `unavailable` message come from a status that may be a block of
/// our network rather than of the post?
pub fn is_network_block(message: &str) -> bool {
    NETWORK_BLOCK_CODES
        .iter()
        .any(|code| message.contains(&format!("(TikTok statusCode {code}")))
}

/// Guide §6: the status codes of `webapp.video-detail`.
pub fn check_status(code: i64, msg: &str, has_item: bool) -> Result<()> {
    let what = match code {
        0 if msg.is_empty() || has_item => return Ok(()),
        0 => "the post is unavailable",
        10216 => "the post is private",
        10222 => "the author's account is private",
        10204 => "the post is not available (deleted, or hidden from this network)",
        10231 => "the post is not available in this region",
        10221 => "the author was not found",
        _ => "the post is unavailable",
    };
    let msg = if msg.is_empty() {
        String::new()
    } else {
        format!(", {msg}")
    };
    Err(Failure::unavailable(format!(
        "{what} (TikTok statusCode {code}{msg})"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::Header;

    fn response(status: u16, body: &str) -> HttpResponse {
        HttpResponse {
            request_url: "https://www.tiktok.com/@_/video/1".into(),
            final_url: "https://www.tiktok.com/@_/video/1".into(),
            status,
            headers: vec![Header::new("Location", "/login?redirect_url=x")],
            body: body.as_bytes().to_vec(),
        }
    }

    /// `analyze` on a response's own (UTF-8) text.
    fn analyze_page<'r>(response: &'r HttpResponse, id: &str) -> Result<Page<'r>> {
        analyze(response, std::str::from_utf8(&response.body).unwrap(), id)
    }

    fn universal(scope: &str) -> String {
        format!(
            r#"<html><script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">{{"__DEFAULT_SCOPE__":{scope}}}</script></html>"#
        )
    }

    #[test]
    fn status_codes() {
        assert!(check_status(0, "", true).is_ok());
        assert!(check_status(0, "", false).is_ok());
        for (code, msg) in [
            (10216, ""),
            (10222, ""),
            (10204, "status_deleted"),
            (10231, ""),
            (10221, ""),
            (0, "status_deleted"),
            (12345, ""),
        ] {
            assert_eq!(
                check_status(code, msg, false).unwrap_err().code(),
                "content_unavailable"
            );
        }
    }

    #[test]
    fn network_blocks_are_recognised() {
        let msg = |code| {
            check_status(code, "", false)
                .unwrap_err()
                .message()
                .to_string()
        };
        assert!(is_network_block(&msg(10204)));
        assert!(is_network_block(&msg(10231)));
        assert!(!is_network_block(&msg(10216)));
    }

    #[test]
    fn message_alone_marks_a_deleted_post() {
        let page =
            universal(r#"{"webapp.video-detail":{"statusCode":0,"statusMsg":"status_deleted"}}"#);
        let err = analyze_page(&response(200, &page), "1").unwrap_err();
        assert_eq!(err.code(), "content_unavailable");
        assert!(err.message().contains("status_deleted"));
    }

    #[test]
    fn missing_detail_keeps_the_canonical() {
        let page = universal(
            r#"{"seo.abtest":{"canonical":"https://www.tiktok.com/@a/video/1"},"webapp.app-context":{}}"#,
        );
        match analyze_page(&response(200, &page), "1").unwrap() {
            Page::NoData { canonical } => {
                assert_eq!(
                    canonical.as_deref(),
                    Some("https://www.tiktok.com/@a/video/1")
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sigi_state_fallback() {
        let page = r#"<script id="SIGI_STATE" type="application/json">{"ItemModule":{"1":{"id":"1","desc":"old"}}}</script>"#;
        match analyze_page(&response(200, page), "1").unwrap() {
            Page::Item(item) => {
                let members: Vec<(&str, &str)> = item
                    .members()
                    .iter()
                    .map(|(n, v)| (n.as_ref(), v.get()))
                    .collect();
                assert_eq!(members, [("id", r#""1""#), ("desc", r#""old""#)]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            analyze_page(&response(200, page), "2").unwrap(),
            Page::NoData { canonical: None }
        ));
    }

    #[test]
    fn http_errors_and_redirects() {
        let code = |status| {
            analyze_page(&response(status, "<html></html>"), "1")
                .unwrap_err()
                .code()
        };
        assert_eq!(code(404), "content_unavailable");
        assert_eq!(code(429), "upstream_rate_limited");
        assert_eq!(code(403), "upstream_rate_limited");
        assert_eq!(code(500), "upstream_error");
        match analyze_page(&response(302, ""), "1").unwrap() {
            Page::Redirect(loc) => assert_eq!(loc, "https://www.tiktok.com/login?redirect_url=x"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            analyze_page(&response(200, "<html><body>hello</body></html>"), "1").unwrap(),
            Page::NoData { canonical: None }
        ));
    }

    #[test]
    fn broken_blob_is_upstream_changed() {
        let page =
            r#"<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">{"__DEFAULT_SCOPE__":</script>"#;
        assert_eq!(
            analyze_page(&response(200, page), "1").unwrap_err().code(),
            "upstream_error"
        );
    }
}
