//! The request cascade (upstream/instagram.md §2–3), re-derived from the
//! exchanges on every call: share-link hops, the homepage session, then the
//! logged-out Polaris GraphQL query, the permalink page, the embed page.

use mediaparse_meta_web::cascade::{Cascade, Judged, Next, found, miss, rank, stop, strategy};
use mediaparse_meta_web::graphql::{Query, strip_hijack_prefix};
use mediaparse_meta_web::session::{Session, document_request, home_request};
use mediaparse_meta_web::share::{Hop, ShareLinks};
use mediaparse_meta_web::{CHROME_UA, data_sjs_blobs, scan, shortcode};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::{self, MaybeObject, Object, RawValue, Text, kind_of};
use mediaparse_sdk::html;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Extraction, Failure, HttpRequest, Result, Step, Target};
use serde::Deserialize;
use serde_json::Value;

use crate::map::{Post, map, map_v1};
use crate::urls::{WWW, is_share, post_code};

pub const HOME: &str = "https://www.instagram.com/";
pub const GRAPHQL: &str = "https://www.instagram.com/api/graphql";
pub const APP_ID: &str = "936619743392459";
/// `PolarisLoggedOutDesktopWWWPostRootContentQuery`; operators may override
/// it with the `doc_id` config entry when Instagram rotates it.
pub const DOC_ID: &str = "27130156389949648";
pub const FRIENDLY_NAME: &str = "PolarisLoggedOutDesktopWWWPostRootContentQuery";
/// Share links redirect for curl, but answer a browser UA with a page (cobalt).
pub const SHARE_UA: &str = mediaparse_sdk::ua::CURL;

const QUERY: Query<'static> = Query {
    endpoint: GRAPHQL,
    origin: WWW,
    app_id: APP_ID,
    friendly_name: FRIENDLY_NAME,
    doc_id: DOC_ID,
    leading_pairs: &[],
    extra_headers: &[
        ("X-IG-WWW-Claim", "0"),
        ("X-Requested-With", "XMLHttpRequest"),
    ],
    user_agent: CHROME_UA,
};

const SHARE_LINKS: ShareLinks<'static, String> = ShareLinks {
    site: "Instagram",
    www: WWW,
    hosts: &["instagram.com", "www.instagram.com"],
    request: share_request,
    arrived: post_code,
    dead_end: share_dead_end,
};

/// The flow: the next requests, or the post found and mapped.
pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    find_post(target, ctx, done)?.into_step(Ok)
}

/// The post, found and mapped by the first strategy that has it (each
/// maps it while its answer's text is at hand).
fn find_post(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Next<Extraction>> {
    let home = done.last_at(HOME);
    let code = if is_share(target) {
        match SHARE_LINKS.follow(&target.canonical_url, done)? {
            Hop::Arrived(code) => code,
            Hop::Next(hop) => {
                // The session is opened alongside the share hops.
                let mut round = vec![hop];
                if home.is_none() {
                    round.push(home_request(HOME, CHROME_UA));
                }
                return Ok(Next::Fetch(round));
            }
        }
    } else {
        target.id.clone()
    };
    let pk = shortcode::post_pk(&code)?;
    let Some(home) = home else {
        return Ok(Next::Fetch(vec![home_request(HOME, CHROME_UA)]));
    };
    let session = Session::read(home);
    let post_url = format!("{WWW}/p/{code}/");
    let embed_url = format!("{WWW}/p/{code}/embed/captioned/");
    let graphql = || {
        let variables = format!("{{\"media_id\":\"{pk}\"}}");
        QUERY.strategy(home, &variables, &post_url, ctx, done, |ex| {
            eval_graphql(ex, &code)
        })
    };
    let page = || {
        let request = || session.with_cookie(document_request(&post_url, CHROME_UA));
        strategy(done.last_at(&post_url), request, |ex| eval_page(ex, &code))
    };
    let embed = || {
        let request = || embed_request(&embed_url);
        strategy(done.last_at(&embed_url), request, |ex| {
            eval_embed(ex, &code)
        })
    };
    Cascade::new()
        // Strategy A: logged-out Polaris GraphQL.
        .attempt(graphql)
        // Strategy B: the permalink page's embedded JSON.
        .attempt(page)
        // Strategy C: the embed page.
        .attempt(embed)
        .finish_ranked(rank)
}

// ---------------------------------------------------------------- share links

fn share_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", SHARE_UA)
        .header("Accept", "*/*")
        .no_redirects()
}

fn share_dead_end(first: Option<&str>, path: &str) -> Failure {
    match first {
        Some("accounts") => {
            Failure::LoginRequired("the share link leads to Instagram's login page".into())
        }
        None => Failure::unavailable("the share link leads to Instagram's home page, not a post"),
        Some(_) => Failure::unavailable(format!("the share link leads to {path}, not a post")),
    }
}

// ---------------------------------------------------------- strategy A

fn eval_graphql(ex: &Exchange, code: &str) -> Judged<Extraction> {
    let status = ex.response.status;
    if status == 429 {
        return miss(Failure::RateLimited(
            "Instagram is rate-limiting anonymous GraphQL".into(),
        ));
    }
    if status != 200 {
        return miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status}"
        )));
    }
    let text = ex.response.text();
    let json = strip_hijack_prefix(&text);
    let Some(media) = polaris_media(json) else {
        return miss(Failure::upstream(
            "the GraphQL query answered something other than JSON (blocked without a browser fingerprint?)",
        ));
    };
    let media = match media {
        None => {
            return miss(Failure::changed(
                "the GraphQL answer has no data.xig_polaris_media",
            ));
        }
        Some(MaybeObject::Null) => {
            return miss(Failure::upstream("the GraphQL answer names no post"));
        }
        Some(MaybeObject::Object(media)) => Some(media),
        Some(MaybeObject::Other) => None,
    };
    let item = media.and_then(|m| m.get("if_not_gated_logged_out"));
    match item.map(|item| (kind_of(item), item)) {
        Some((b'{', item)) => checked_v1(item, code),
        Some((b'n', _)) => stop(Failure::LoginRequired(
            "Instagram shows this post only to signed-in users".into(),
        )),
        _ => miss(Failure::changed(
            "the GraphQL answer has no if_not_gated_logged_out member",
        )),
    }
}

/// `data.xig_polaris_media` of a GraphQL answer's JSON: absent (`None`)
/// or which value it is, its members found in one pass over the answer;
/// `None` when the answer is no JSON.
fn polaris_media(json: &str) -> Option<Option<MaybeObject<'_>>> {
    #[derive(Default, Deserialize)]
    struct Answer<'a> {
        #[serde(borrow, default, deserialize_with = "fields::object")]
        data: Data<'a>,
    }
    #[derive(Default, Deserialize)]
    struct Data<'a> {
        #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
        xig_polaris_media: Option<MaybeObject<'a>>,
    }
    if let Ok(answer) = serde_json::from_str::<Answer>(json) {
        return Some(answer.data.xig_polaris_media);
    }
    // A name given twice (the last counts), or no object: level by level.
    let answer = serde_json::from_str::<MaybeObject>(json)
        .ok()?
        .into_object()
        .unwrap_or_default();
    let media = answer
        .get("data")
        .and_then(Object::of)
        .and_then(|data| data.get("xig_polaris_media"));
    Some(media.and_then(|m| serde_json::from_str(m.get()).ok()))
}

/// The media item `item` mapped when it is the post `code`.
fn checked_v1(item: &RawValue, code: &str) -> Judged<Extraction> {
    let Some(object) = Object::of(item) else {
        return miss(Failure::changed("the media item has no code"));
    };
    let named = object
        .get("code")
        .filter(|r| kind_of(r) == b'"')
        .and_then(|r| serde_json::from_str::<Text>(r.get()).ok());
    match named {
        Some(c) if c.as_str() == code => found(map_v1(&object)?),
        Some(other) => miss(Failure::upstream(format!(
            "Instagram answered with another post ({})",
            other.as_str()
        ))),
        None => miss(Failure::changed("the media item has no code")),
    }
}

// ---------------------------------------------------------- strategies B, C

/// A page that bounced to the login page or the home page.
fn login_wall(ex: &Exchange) -> Option<Failure> {
    let url = InputUrl::parse(&ex.response.final_url).ok()?;
    match url.segments.first().map(String::as_str) {
        Some("accounts") | None => Some(Failure::LoginRequired(
            "Instagram redirected to its login page (login wall or anonymous rate limit)".into(),
        )),
        _ => None,
    }
}

fn status_miss(ex: &Exchange, what: &str) -> Option<Judged<Extraction>> {
    if let Some(f) = login_wall(ex) {
        return Some(miss(f));
    }
    match ex.response.status {
        200 => None,
        404 | 410 => Some(stop(Failure::unavailable(
            "the post does not exist or was deleted",
        ))),
        429 => Some(miss(Failure::RateLimited(format!(
            "Instagram is rate-limiting the {what}"
        )))),
        s => Some(miss(Failure::upstream(format!(
            "the {what} answered HTTP {s}"
        )))),
    }
}

fn eval_page(ex: &Exchange, code: &str) -> Judged<Extraction> {
    if let Some(m) = status_miss(ex, "post page") {
        return m;
    }
    let html = ex.response.text();
    for blob in data_sjs_blobs(&html) {
        if !html::contains(blob, code) && !html::contains(blob, "xig_polaris_media") {
            continue;
        }
        if let Some(media) = scan::find_key(blob, "xig_polaris_media") {
            let item = Object::of(media).and_then(|m| m.get("if_not_gated_logged_out"));
            match item.map(|i| (kind_of(i), i)) {
                Some((b'{', item)) => return checked_v1(item, code),
                Some((b'n', _)) => {
                    return stop(Failure::LoginRequired(
                        "Instagram shows this post only to signed-in users".into(),
                    ));
                }
                _ => {}
            }
        }
        if let Some(item) = scan::find_key(blob, "xdt_api__v1__media__shortcode__web_info")
            .and_then(|w| Object::of(w).and_then(|w| w.get("items")))
            .and_then(first_element)
        {
            return checked_v1(item, code);
        }
        let post = scan::find_object(blob, |m| {
            m.string("code").as_deref() == Some(code)
                && (m.has("image_versions2") || m.has("carousel_media"))
        });
        if let Some(item) = post.and_then(Object::of) {
            return found(map_v1(&item)?);
        }
    }
    miss(Failure::changed(
        "the post page carries no media JSON for this post",
    ))
}

/// The first element of an array's text.
fn first_element(list: &RawValue) -> Option<&RawValue> {
    if kind_of(list) != b'[' {
        return None;
    }
    let items: Vec<&RawValue> = serde_json::from_str(list.get()).ok()?;
    items.first().copied()
}

fn embed_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", CHROME_UA)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Sec-Fetch-Dest", "iframe")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Site", "cross-site")
}

const INIT_MARKER: &str = "\"init\",[],[";

fn eval_embed(ex: &Exchange, code: &str) -> Judged<Extraction> {
    if let Some(m) = status_miss(ex, "embed page") {
        return m;
    }
    let html = ex.response.text();
    let mut from = 0;
    while let Some(pos) = html[from..].find(INIT_MARKER) {
        let start = from + pos + INIT_MARKER.len() - 1;
        from = start + 1;
        let Some(array) = mediaparse_sdk::html::balanced(&html[start..]) else {
            continue;
        };
        let Ok(Value::Array(args)) = serde_json::from_str::<Value>(array) else {
            continue;
        };
        for arg in &args {
            let Some(context) = arg.get("contextJSON").and_then(Value::as_str) else {
                continue;
            };
            let Ok(context) = serde_json::from_str::<Value>(context) else {
                return miss(Failure::changed("the embed page's contextJSON is not JSON"));
            };
            if let Some(media) = context
                .pointer("/gql_data/shortcode_media")
                .filter(|m| m.is_object())
            {
                return match media.get("shortcode").and_then(Value::as_str) {
                    Some(c) if c == code => found(map(&Post::Legacy(media.clone()))?),
                    Some(other) => miss(Failure::upstream(format!(
                        "the embed page shows another post ({other})"
                    ))),
                    None => miss(Failure::changed("the embed media has no shortcode")),
                };
            }
        }
    }
    embed_html_image(&html, code)
}

/// The embed's HTML when its `contextJSON` is null: a single image only.
fn embed_html_image(html: &str, code: &str) -> Judged<Extraction> {
    let mut kind = None;
    let mut media_id = None;
    let mut owner_id = None;
    let mut image: Option<(String, u32)> = None;
    let mut username = None;
    for tag in mediaparse_sdk::html::tags(html) {
        let class = tag.attr("class").unwrap_or_default();
        let classes: Vec<&str> = class.split_ascii_whitespace().collect();
        if classes.contains(&"Embed") && kind.is_none() {
            kind = tag.attr("data-media-type");
            media_id = tag.attr("data-media-id").filter(|v| !v.is_empty());
            owner_id = tag.attr("data-owner-id").filter(|v| !v.is_empty());
        }
        if classes.contains(&"UsernameText") && username.is_none() {
            let rest = html.get(tag.end..).unwrap_or_default();
            let text = rest.split('<').next().unwrap_or_default().trim();
            if !text.is_empty() {
                username = Some(mediaparse_sdk::html::decode_entities(text));
            }
        }
        if tag.name.eq_ignore_ascii_case("img")
            && classes.contains(&"EmbeddedMediaImage")
            && image.is_none()
        {
            image = largest_src(&tag);
        }
    }
    if html::contains(html, "WatchOnInstagram")
        || matches!(kind.as_deref(), Some("GraphVideo" | "GraphSidecar"))
    {
        return miss(Failure::upstream(
            "the embed page withholds this post's media (watch on Instagram)",
        ));
    }
    match image {
        Some((url, width)) => found(map(&Post::EmbedImage {
            code: code.into(),
            url,
            width,
            media_id,
            owner_id,
            username,
        })?),
        None => miss(Failure::changed("the embed page carries no media")),
    }
}

/// The largest `srcset` entry of an image (width from its `w` descriptor), else `src`.
fn largest_src(tag: &mediaparse_sdk::html::Tag<'_>) -> Option<(String, u32)> {
    let mut best: Option<(String, u32)> = None;
    if let Some(srcset) = tag.attr("srcset") {
        for entry in srcset.split(',') {
            let mut parts = entry.split_ascii_whitespace();
            let (Some(url), Some(w)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Some(width) = w.strip_suffix('w').and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if url.starts_with("http") && best.as_ref().is_none_or(|b| width > b.1) {
                best = Some((url.to_string(), width));
            }
        }
    }
    best.or_else(|| {
        tag.attr("src")
            .filter(|s| s.starts_with("http"))
            .map(|s| (s, 0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::cascade::Attempt;
    const CODE: &str = "DAbc";

    fn answer(status: u16, body: &str) -> Exchange {
        Exchange {
            request: HttpRequest::get(GRAPHQL),
            response: mediaparse_sdk::HttpResponse {
                request_url: GRAPHQL.into(),
                final_url: GRAPHQL.into(),
                status,
                headers: Vec::new(),
                body: body.as_bytes().to_vec(),
            },
        }
    }

    const GRAPHQL_ANSWERS: &[(u16, &str)] = &[
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":"DAbc","image_versions2":{"candidates":[{"url":"https://scontent.cdninstagram.com/a.jpg","width":1,"height":1}]}}}}}"#,
        ),
        (
            200,
            r#"for (;;); {"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":"DAbc"}}}}"#,
        ),
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":"Other"}}}}"#,
        ),
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":7}}}}"#,
        ),
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":"DAbc","video_versions":"nope"}}}}"#,
        ),
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":null}}}"#,
        ),
        (
            200,
            r#"{"data":{"xig_polaris_media":{"if_not_gated_logged_out":[1]}}}"#,
        ),
        (200, r#"{"data":{"xig_polaris_media":{}}}"#),
        (200, r#"{"data":{"xig_polaris_media":[]}}"#),
        (200, r#"{"data":{"xig_polaris_media":null}}"#),
        (
            200,
            r#"{"data":{"xig_polaris_media":null},"data":{"xig_polaris_media":{"if_not_gated_logged_out":{"code":"DAbc","code":"Other"}}}}"#,
        ),
        (200, r#"{"data":null}"#),
        (200, r#"{"data":[]}"#),
        (200, "[1]"),
        (200, "7"),
        (200, "<html>login</html>"),
        (200, r#"{"data":"#),
        (429, "{}"),
        (500, "{}"),
    ];

    /// The GraphQL judge's verdict on a table of answers: each level's
    /// missing, `null` or other values, a name given twice (the last
    /// counts), no JSON, and a mapping failure, which ends the cascade.
    #[test]
    fn graphql_answers_read_in_one_pass() {
        let expected = [
            "got 1 0",
            "got 0 0",
            "missed upstream_error Instagram answered with another post (Other)",
            "missed upstream_error the media item has no code",
            r#"stop upstream_error the media item is not the known JSON: invalid type: string "nope", expected a sequence at line 1 column 6"#,
            "stop login_required Instagram shows this post only to signed-in users",
            "missed upstream_error the GraphQL answer has no if_not_gated_logged_out member",
            "missed upstream_error the GraphQL answer has no if_not_gated_logged_out member",
            "missed upstream_error the GraphQL answer has no if_not_gated_logged_out member",
            "missed upstream_error the GraphQL answer names no post",
            "missed upstream_error Instagram answered with another post (Other)",
            "missed upstream_error the GraphQL answer has no data.xig_polaris_media",
            "missed upstream_error the GraphQL answer has no data.xig_polaris_media",
            "missed upstream_error the GraphQL answer has no data.xig_polaris_media",
            "missed upstream_error the GraphQL answer has no data.xig_polaris_media",
            "missed upstream_error the GraphQL query answered something other than JSON (blocked without a browser fingerprint?)",
            "missed upstream_error the GraphQL query answered something other than JSON (blocked without a browser fingerprint?)",
            "missed upstream_rate_limited Instagram is rate-limiting anonymous GraphQL",
            "missed upstream_error the GraphQL query answered HTTP 500",
        ];
        for ((status, body), expected) in GRAPHQL_ANSWERS.iter().zip(expected) {
            let verdict = match eval_graphql(&answer(*status, body), CODE) {
                Ok(Attempt::Got(ex)) => {
                    format!("got {} {}", ex.media.images.len(), ex.media.videos.len())
                }
                Ok(Attempt::Missed(f)) => format!("missed {} {}", f.code(), f.message()),
                Err(f) => format!("stop {} {}", f.code(), f.message()),
            };
            assert_eq!(verdict, expected, "{body}");
        }
    }
}
