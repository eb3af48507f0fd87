//! Reading Douyin's answers: each strategy's answer as a cascade attempt
//! (the aweme object, or why it has none), then the media object and
//! platform data of an aweme (typed view in `aweme`) or of a direct URL.

use mediaparse_sdk::cascade::Attempt;
use mediaparse_sdk::fields::{self, MaybeObject, Object, RawValue};
use mediaparse_sdk::html::{self, assigned_value};
use mediaparse_sdk::spec::{fill_missing_members, listed_members};
use mediaparse_sdk::{
    Audio, Extraction, Failure, HttpResponse, Image, Media, MediaSource, ObjectWriter, Result,
    Video,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::urls::{DirectKind, Link};
use crate::{PLATFORM, aweme};

fn anti_bot() -> Failure {
    Failure::RateLimited("Douyin answered with an anti-bot challenge".into())
}

fn no_post() -> Failure {
    Failure::unavailable("Douyin returned no post for this id (deleted or hidden)")
}

/// A 2xx answer with nothing in it: a share page worth one retry, or a
/// slidesinfo lookup the endpoint refused (worth the other form).
pub fn is_empty_frame(response: &HttpResponse) -> bool {
    response.is_success() && response.text().trim().is_empty()
}

/// Markers of ByteDance's anti-bot pages (WAF proof-of-work, JSVMP).
fn is_anti_bot(text: &str) -> bool {
    [
        "waf-jschallenge",
        "_wafchallengeid",
        "byted_acrawler",
        "__ac_nonce",
    ]
    .iter()
    .any(|m| html::contains(text, m))
}

fn is_blocked_page(text: &str) -> bool {
    html::contains(text, "抱歉出错了") || html::contains(text, "请尝试在抖音内观看")
}

/// Common HTTP-level signals; `None` when the body should be read.
fn http_miss(response: &HttpResponse) -> Option<Failure> {
    if matches!(response.status, 429 | 403) {
        return Some(anti_bot());
    }
    if !response.is_success() {
        return Some(Failure::upstream(format!(
            "Douyin answered HTTP {}",
            response.status
        )));
    }
    None
}

/// `{"aweme_details":[…]}`: the first item mapped, or why there is none.
pub fn read_slidesinfo(response: &HttpResponse) -> Result<Attempt<Extraction>> {
    if let Some(miss) = http_miss(response) {
        return Ok(Attempt::Missed(miss));
    }
    if is_empty_frame(response) {
        return Ok(Attempt::Missed(Failure::upstream(
            "slidesinfo answered an empty body (the lookup was refused)",
        )));
    }
    let text = response.text();
    if is_anti_bot(&text) {
        return Ok(Attempt::Missed(anti_bot()));
    }
    let Ok(body) = Container::of_text(&text) else {
        if is_blocked_page(&text) {
            return Ok(Attempt::Missed(Failure::upstream(
                "Douyin shows this post only in its app",
            )));
        }
        return Ok(Attempt::Missed(Failure::changed(
            "slidesinfo did not answer JSON",
        )));
    };
    check_filters_text(body.filter_list, body.item_list.or(body.aweme_details))?;
    let Some(details) = body.aweme_details else {
        return Ok(Attempt::Missed(Failure::changed(
            "slidesinfo answer has no aweme_details",
        )));
    };
    if details.get() == "null" {
        return Ok(Attempt::Missed(no_post()));
    }
    // Each item's members are found in the one pass over the list.
    let Some(items) = read::<Vec<Element>>(Some(details)) else {
        return Ok(Attempt::Missed(Failure::changed(
            "slidesinfo answer has no aweme_details",
        )));
    };
    Ok(match items.into_iter().next() {
        Some(Element(Some(item))) => Attempt::Got(post_extraction(&item)?),
        Some(Element(None)) => {
            Attempt::Missed(Failure::changed("slidesinfo item is not an object"))
        }
        None => Attempt::Missed(no_post()),
    })
}

/// A list element: its members when it is an object.
#[derive(Deserialize)]
struct Element<'a>(
    #[serde(borrow, deserialize_with = "fields::object_members")] Option<Object<'a>>,
);

/// A member's text read as `T` (`None` when absent or of another type).
fn read<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<T> {
    serde_json::from_str(raw?.get()).ok()
}

/// The members of an answer that hold the post or say why it is hidden, as
/// their text (all absent when the answer is no object, or names one of
/// them twice).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Container<'a> {
    #[serde(borrow, deserialize_with = "fields::raw")]
    filter_list: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    item_list: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    aweme_details: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    aweme_detail: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    filter_detail: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "fields::raw")]
    status_msg: Option<&'a RawValue>,
}

impl<'a> Container<'a> {
    /// The members of the JSON `text` (its members found once, none for
    /// other JSON); its error when it is no JSON at all.
    fn of_text(text: &'a str) -> serde_json::Result<Container<'a>> {
        Ok(match serde_json::from_str::<MaybeObject>(text)? {
            MaybeObject::Object(object) => object.read("the answer").unwrap_or_default(),
            _ => Container::default(),
        })
    }
}

/// `window._ROUTER_DATA = {"loaderData":{"video_(id)/page":{"videoInfoRes":…}}}`.
pub fn read_share_page(response: &HttpResponse) -> Result<Attempt<Extraction>> {
    if let Some(miss) = http_miss(response) {
        return Ok(Attempt::Missed(miss));
    }
    let text = response.text();
    if is_empty_frame(response) {
        return Ok(Attempt::Missed(Failure::changed(
            "the share page came back empty",
        )));
    }
    if is_anti_bot(&text) {
        return Ok(Attempt::Missed(anti_bot()));
    }
    let Some(raw) = assigned_value(&text, "window._ROUTER_DATA") else {
        if is_blocked_page(&text) {
            return Ok(Attempt::Missed(Failure::upstream(
                "Douyin shows this post only in its app",
            )));
        }
        return Ok(Attempt::Missed(Failure::changed(
            "the share page has no _ROUTER_DATA",
        )));
    };
    let data = serde_json::from_str::<Value>(raw)
        .or_else(|_| mediaparse_sdk::jsobj::parse(raw))
        .map_err(|e| Failure::changed(format!("_ROUTER_DATA is not JSON: {e}")))?;
    let info = data
        .get("loaderData")
        .and_then(Value::as_object)
        .and_then(|pages| pages.values().find_map(|page| page.get("videoInfoRes")));
    let Some(info) = info else {
        // Since 2026-08 the page often loads the post client side.
        return Ok(Attempt::Missed(Failure::changed(
            "the share page carries no videoInfoRes",
        )));
    };
    check_filters(info)?;
    match info.get("item_list").and_then(Value::as_array) {
        Some(items) => Ok(match items.first() {
            // The page's data may be a JavaScript literal: read as a tree.
            Some(item @ Value::Object(_)) => match serde_json::value::to_raw_value(item) {
                Ok(text) => match Object::of(&text) {
                    Some(item) => Attempt::Got(post_extraction(&item)?),
                    None => Attempt::Missed(Failure::changed("the share page's item")),
                },
                Err(e) => Attempt::Missed(Failure::changed(format!("the share page's item: {e}"))),
            },
            _ => Attempt::Missed(no_post()),
        }),
        None => Ok(Attempt::Missed(Failure::changed(
            "videoInfoRes has no item_list",
        ))),
    }
}

/// `{"aweme_detail":{…}}` mapped, or `null` with `status_code`/`filter_detail`.
pub fn read_web_api(response: &HttpResponse) -> Result<Attempt<Extraction>> {
    if let Some(miss) = http_miss(response) {
        return Ok(Attempt::Missed(miss));
    }
    let text = response.text();
    if text.trim().is_empty() {
        return Ok(Attempt::Missed(Failure::LoginRequired(
            "the web API needs a fresh browser cookie (operator setting `cookie`)".into(),
        )));
    }
    if is_anti_bot(&text) {
        return Ok(Attempt::Missed(anti_bot()));
    }
    let body = Container::of_text(&text)
        .map_err(|e| Failure::changed(format!("the web API did not answer JSON: {e}")))?;
    match body.aweme_detail.map(|item| (Object::of(item), item)) {
        Some((Some(item), _)) => Ok(Attempt::Got(post_extraction(&item)?)),
        Some((None, item)) if item.get() != "null" => Ok(Attempt::Missed(Failure::changed(
            "aweme_detail is not an object",
        ))),
        _ => {
            let detail: Option<Value> = read(body.filter_detail);
            let status: Option<Value> = read(body.status_msg);
            let filter = detail
                .as_ref()
                .and_then(|f| f.get("filter_reason").or_else(|| f.get("detail_msg")))
                .and_then(Value::as_str)
                .or_else(|| status.as_ref().and_then(Value::as_str))
                .unwrap_or("filtered");
            Err(Failure::unavailable(format!(
                "Douyin filtered this post ({filter})"
            )))
        }
    }
}

/// `filter_list[]` entries say why a post is hidden: private, friends
/// only, deleted. Each is final.
pub fn check_filters(container: &Value) -> Result<()> {
    let Some(filters) = container.get("filter_list").and_then(Value::as_array) else {
        return Ok(());
    };
    let has_items = container
        .get("item_list")
        .or_else(|| container.get("aweme_details"))
        .and_then(Value::as_array)
        .is_some_and(|items| !items.is_empty());
    filter_verdict(filters.first(), has_items)
}

/// [`check_filters`] on the members' text: `filter_list`, and `item_list`
/// or else `aweme_details`.
fn check_filters_text(filter_list: Option<&RawValue>, items: Option<&RawValue>) -> Result<()> {
    let Some(filters) = read::<Vec<Value>>(filter_list) else {
        return Ok(());
    };
    let has_items = items
        .and_then(|i| i.get().strip_prefix('['))
        .is_some_and(|rest| !rest.trim_start().starts_with(']'));
    filter_verdict(filters.first(), has_items)
}

/// The failure the first `filter_list` entry means, unless the answer
/// holds items anyway.
fn filter_verdict(filter: Option<&Value>, has_items: bool) -> Result<()> {
    let Some(filter) = filter else {
        return Ok(());
    };
    let field = |name: &str| {
        filter
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let reason = field("filter_reason");
    let message = [field("detail_msg"), field("notice")].join(" ");
    let lower = reason.to_ascii_lowercase();
    if has_items {
        return Ok(());
    }
    if ["self_see", "private", "friend"]
        .iter()
        .any(|k| lower.contains(k))
    {
        return Err(Failure::unavailable(format!(
            "the post is private or visible to friends only ({reason})"
        )));
    }
    if message.contains("删除") || message.contains("不存在") {
        return Err(Failure::unavailable(format!(
            "the post was deleted ({})",
            message.trim()
        )));
    }
    Err(Failure::unavailable(format!(
        "Douyin filtered this post ({reason})"
    )))
}

/// Map an aweme object (its members): media plus the object itself as
/// platform data, copied as its text (the host writes integers beyond 2^53
/// as strings). The media parses only the members it names, and the
/// platform data copies them without another pass.
pub fn post_extraction(members: &Object) -> Result<Extraction> {
    let aweme: aweme::Aweme = members.read("aweme object")?;
    let media = aweme.to_media();
    let mut data = ObjectWriter::new();
    // A listed member the upstream sent as `null` is its type's empty value.
    let listed = listed_members(PLATFORM);
    data.rest_of_object_where(members, |name, value| {
        value.get() != "null" || !listed.iter().any(|(n, _)| *n == name)
    });
    Ok(Extraction {
        media,
        platform_data: data.finish(PLATFORM),
    })
}

/// Path D: the URL itself is the media; no aweme object exists.
pub fn direct_extraction(link: &Link) -> Extraction {
    let Link::Direct { url, kind, .. } = link else {
        return Extraction {
            media: Media::default(),
            platform_data: Value::Object(Map::new()).into(),
        };
    };
    let headers = aweme::download_headers();
    let mut media = Media::default();
    match kind {
        DirectKind::Video => media
            .videos
            .push(Video::mp4(url, "direct", (0, 0), headers)),
        DirectKind::Image => media.images.push(Image {
            url: url.clone(),
            width: 0,
            height: 0,
        }),
        DirectKind::Audio => media.audios.push(Audio {
            url: url.clone(),
            quality: "direct".into(),
            mime_type: "audio/mpeg".into(),
            bitrate: 0,
            source: MediaSource::Direct,
            headers,
        }),
    }
    let mut data = Map::new();
    data.insert("media_url".into(), Value::String(url.clone()));
    data.insert("media_type".into(), Value::String(kind.as_str().into()));
    fill_missing_members(PLATFORM, &mut data);
    Extraction {
        media,
        platform_data: Value::Object(data).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// What the slidesinfo and web API readers make of an answer's body.
    fn verdicts(body: &str) -> String {
        let response = HttpResponse {
            request_url: "https://www.iesdouyin.com/web/api/v2/aweme/slidesinfo/".into(),
            final_url: "https://www.iesdouyin.com/web/api/v2/aweme/slidesinfo/".into(),
            status: 200,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        };
        let say = |answer: Result<Attempt<Extraction>>| match answer {
            Ok(Attempt::Got(ex)) => format!(
                "got {} {}",
                ex.platform_data.to_value()["aweme_id"],
                ex.media.images.len()
            ),
            Ok(Attempt::Missed(f)) => format!("missed {} {}", f.code(), f.message()),
            Err(f) => format!("failed {} {}", f.code(), f.message()),
        };
        format!(
            "{} | {}",
            say(read_slidesinfo(&response)),
            say(read_web_api(&response))
        )
    }

    const ANSWERS: &[&str] = &[
        r#"{"aweme_details":[{"aweme_id":"1","images":[{"url_list":["https://p3-sign.douyinpic.com/a.jpeg"]}]}],"aweme_detail":{"aweme_id":"2"}}"#,
        r#"{"aweme_details":[7,{"aweme_id":"1"}]}"#,
        r#"{"aweme_details":[]}"#,
        r#"{"aweme_details":null,"aweme_detail":null,"filter_detail":{"filter_reason":"x"}}"#,
        r#"{"aweme_details":{"aweme_id":"1"},"aweme_detail":[1]}"#,
        r#"{"aweme_details":[{"aweme_id":"1","aweme_id":"3"}],"aweme_detail":{"a":1,"a":2}}"#,
        r#"{"filter_list":[{"filter_reason":"self_see"}],"aweme_details":[]}"#,
        r#"{"aweme_details":[{"aweme_id":"1"}],"aweme_details":[]}"#,
        r#"[{"aweme_id":"1"}]"#,
        r#"7"#,
        r#"<html>抱歉出错了</html>"#,
        r#"{"aweme_details":[{"aweme_id":"1"}"#,
    ];

    /// What the readers make of a table of answers: items, empty lists,
    /// nulls, other types, names given twice (a container naming one of
    /// its members twice reads as empty; an item's last value counts),
    /// filters, other JSON and no JSON.
    #[test]
    fn answers_read_in_one_pass() {
        let expected = [
            r#"got "1" 1 | got "2" 0"#,
            "missed upstream_error slidesinfo item is not an object | failed content_unavailable Douyin filtered this post (filtered)",
            "missed content_unavailable Douyin returned no post for this id (deleted or hidden) | failed content_unavailable Douyin filtered this post (filtered)",
            "missed content_unavailable Douyin returned no post for this id (deleted or hidden) | failed content_unavailable Douyin filtered this post (x)",
            "missed upstream_error slidesinfo answer has no aweme_details | missed upstream_error aweme_detail is not an object",
            r#"got "1" 0 | got "" 0"#,
            "failed content_unavailable the post is private or visible to friends only (self_see) | failed content_unavailable Douyin filtered this post (filtered)",
            "missed upstream_error slidesinfo answer has no aweme_details | failed content_unavailable Douyin filtered this post (filtered)",
            "missed upstream_error slidesinfo answer has no aweme_details | failed content_unavailable Douyin filtered this post (filtered)",
            "missed upstream_error slidesinfo answer has no aweme_details | failed content_unavailable Douyin filtered this post (filtered)",
            "missed upstream_error Douyin shows this post only in its app | failed upstream_error the web API did not answer JSON: expected value at line 1 column 1",
            "missed upstream_error slidesinfo did not answer JSON | failed upstream_error the web API did not answer JSON: EOF while parsing a list at line 1 column 34",
        ];
        for (answer, expected) in ANSWERS.iter().zip(expected) {
            assert_eq!(verdicts(answer), expected, "{answer}");
        }
    }

    #[test]
    fn filters_map_to_unavailable() {
        let private: Value = serde_json::json!({"item_list":[],"filter_list":[{"aweme_id":"1","filter_reason":"self_see","detail_msg":"","notice":""}]});
        assert_eq!(
            check_filters(&private).unwrap_err().code(),
            "content_unavailable"
        );
        let friends: Value =
            serde_json::json!({"item_list":[],"filter_list":[{"filter_reason":"friend_see"}]});
        assert!(check_filters(&friends).is_err());
        let none: Value = serde_json::json!({"item_list":[{"aweme_id":"1"}],"filter_list":[]});
        assert!(check_filters(&none).is_ok());
    }
}
