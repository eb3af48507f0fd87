//! The request cascade (upstream/instagram.md §2–3), re-derived from the
//! exchanges on every call: share-link hops, the homepage session, then the
//! logged-out Polaris GraphQL query, the permalink page, the embed page.

use mediaparse_meta_web::cascade::{Cascade, Judged, Next, found, miss, rank, stop, strategy};
use mediaparse_meta_web::graphql::{Query, json_text};
use mediaparse_meta_web::session::{Session, document_request, home_request};
use mediaparse_meta_web::share::{Hop, ShareLinks};
use mediaparse_meta_web::{CHROME_UA, data_sjs_blobs, scan, shortcode};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::html;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, Result, Step, Target};
use serde_json::Value;

use crate::map::Post;
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
    find_post(target, ctx, done)?.into_step(|post| crate::map::map(&post))
}

fn find_post(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Next<Post>> {
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

fn eval_graphql(ex: &Exchange, code: &str) -> Judged<Post> {
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
    let Some(json) = json_text(&text) else {
        return miss(Failure::upstream(
            "the GraphQL query answered something other than JSON (blocked without a browser fingerprint?)",
        ));
    };
    let Some(media) = fields::at(Some(json), &["data", "xig_polaris_media"]) else {
        return miss(Failure::changed(
            "the GraphQL answer has no data.xig_polaris_media",
        ));
    };
    if kind_of(media) == b'n' {
        return miss(Failure::upstream("the GraphQL answer names no post"));
    }
    match fields::at(Some(media), &["if_not_gated_logged_out"]).map(|item| (kind_of(item), item)) {
        Some((b'{', item)) => checked_v1(item, code),
        Some((b'n', _)) => stop(Failure::LoginRequired(
            "Instagram shows this post only to signed-in users".into(),
        )),
        _ => miss(Failure::changed(
            "the GraphQL answer has no if_not_gated_logged_out member",
        )),
    }
}

/// A string member of an object's text (`None` for any other value).
fn string_member<'a>(object: &'a RawValue, name: &str) -> Option<Text<'a>> {
    fields::at(Some(object), &[name])
        .filter(|r| kind_of(r) == b'"')
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

fn checked_v1(item: &RawValue, code: &str) -> Judged<Post> {
    match string_member(item, "code") {
        Some(c) if c.as_str() == code => found(Post::V1(item.to_owned())),
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

fn status_miss(ex: &Exchange, what: &str) -> Option<Judged<Post>> {
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

fn eval_page(ex: &Exchange, code: &str) -> Judged<Post> {
    if let Some(m) = status_miss(ex, "post page") {
        return m;
    }
    let html = ex.response.text();
    for blob in data_sjs_blobs(&html) {
        if !html::contains(blob, code) && !html::contains(blob, "xig_polaris_media") {
            continue;
        }
        if let Some(media) = scan::find_key(blob, "xig_polaris_media") {
            match fields::at(Some(media), &["if_not_gated_logged_out"]).map(|i| (kind_of(i), i)) {
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
            .and_then(|w| fields::at(Some(w), &["items"]))
            .and_then(first_element)
        {
            return checked_v1(item, code);
        }
        let post = scan::find_object(blob, |m| {
            m.string("code").as_deref() == Some(code)
                && (m.has("image_versions2") || m.has("carousel_media"))
        });
        if let Some(item) = post {
            return found(Post::V1(item.to_owned()));
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

fn eval_embed(ex: &Exchange, code: &str) -> Judged<Post> {
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
                    Some(c) if c == code => found(Post::Legacy(media.clone())),
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
fn embed_html_image(html: &str, code: &str) -> Judged<Post> {
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
        Some((url, width)) => found(Post::EmbedImage {
            code: code.into(),
            url,
            width,
            media_id,
            owner_id,
            username,
        }),
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
