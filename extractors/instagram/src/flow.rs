//! The request cascade (upstream/instagram.md §2–3), re-derived from the
//! exchanges on every call: share-link hops, the homepage session, then the
//! logged-out Polaris GraphQL query, the permalink page, the embed page.

use mediaparse_meta_web::shortcode;
use mediaparse_sdk::cookies::set_cookies;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, Result, Target};
use serde_json::Value;

use crate::detect::{WWW, is_share, post_code};
use crate::post::{CHROME_UA, Post};
use mediaparse_meta_web::{data_sjs_blobs, find_key, find_object, lsd_token};

pub const HOME: &str = "https://www.instagram.com/";
pub const GRAPHQL: &str = "https://www.instagram.com/api/graphql";
pub const APP_ID: &str = "936619743392459";
pub const ASBD_ID: &str = "359341";
/// `PolarisLoggedOutDesktopWWWPostRootContentQuery`; operators may override
/// it with the `doc_id` config entry when Instagram rotates it.
pub const DOC_ID: &str = "27130156389949648";
pub const FRIENDLY_NAME: &str = "PolarisLoggedOutDesktopWWWPostRootContentQuery";
/// Share links redirect for curl, but answer a browser UA with a page (cobalt).
pub const SHARE_UA: &str = "curl/7.88.1";
/// Redirect hops a share link may take before it must name a post.
const MAX_SHARE_HOPS: usize = 3;
/// How long the host may reuse the homepage session (cookies + LSD).
const SESSION_TTL: u32 = 1800;

/// What the cascade needs next.
pub enum Step {
    Fetch(Vec<HttpRequest>),
    Found(Post),
}

/// A strategy's failure; `definitive` ones end the cascade.
struct Miss {
    failure: Failure,
    definitive: bool,
}

fn miss(failure: Failure) -> Miss {
    Miss {
        failure,
        definitive: false,
    }
}

fn stop(failure: Failure) -> Miss {
    Miss {
        failure,
        definitive: true,
    }
}

pub fn run(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let home = done.iter().rev().find(|e| e.request.url == HOME);
    let code = if is_share(target) {
        match resolve_share(target, done)? {
            Ok(code) => code,
            Err(hop) => {
                let mut round = vec![hop];
                if home.is_none() {
                    round.push(home_request());
                }
                return Ok(Step::Fetch(round));
            }
        }
    } else {
        target.id.clone()
    };
    if shortcode::is_private(&code) {
        return Err(Failure::unavailable(
            "this is a private post's link; private posts are unsupported",
        ));
    }
    let pk = shortcode::decode(&code)
        .ok_or_else(|| Failure::unsupported("the shortcode does not decode to a media id"))?;
    let Some(home) = home else {
        return Ok(Step::Fetch(vec![home_request()]));
    };
    let session = Session::read(home);
    let post_url = format!("{WWW}/p/{code}/");
    let mut misses: Vec<Failure> = Vec::new();

    // Strategy A: logged-out Polaris GraphQL.
    match &session.lsd {
        Some(lsd) => {
            let body = graphql_body(lsd, pk, ctx);
            let answer = done.iter().rev().find(|e| {
                e.request.url == GRAPHQL && e.request.body.as_deref() == Some(body.as_bytes())
            });
            match answer {
                None => {
                    return Ok(Step::Fetch(vec![graphql_request(
                        &session, lsd, body, &post_url, ctx,
                    )]));
                }
                Some(ex) => match eval_graphql(ex, &code) {
                    Ok(post) => return Ok(Step::Found(post)),
                    Err(m) if m.definitive => return Err(m.failure),
                    Err(m) => misses.push(m.failure),
                },
            }
        }
        None => misses.push(Failure::upstream(format!(
            "the homepage gave no LSD token (HTTP {})",
            home.response.status
        ))),
    }

    // Strategy B: the permalink page's embedded JSON.
    match done.iter().rev().find(|e| e.request.url == post_url) {
        None => return Ok(Step::Fetch(vec![page_request(&post_url, &session)])),
        Some(ex) => match eval_page(ex, &code) {
            Ok(post) => return Ok(Step::Found(post)),
            Err(m) if m.definitive => return Err(m.failure),
            Err(m) => misses.push(m.failure),
        },
    }

    // Strategy C: the embed page.
    let embed_url = format!("{WWW}/p/{code}/embed/captioned/");
    match done.iter().rev().find(|e| e.request.url == embed_url) {
        None => return Ok(Step::Fetch(vec![embed_request(&embed_url)])),
        Some(ex) => match eval_embed(ex, &code) {
            Ok(post) => return Ok(Step::Found(post)),
            Err(m) if m.definitive => return Err(m.failure),
            Err(m) => misses.push(m.failure),
        },
    }
    Err(most_telling(misses))
}

/// Of the strategies' failures, the one that says most about the post.
fn most_telling(misses: Vec<Failure>) -> Failure {
    let rank = |f: &Failure| match f {
        Failure::Unavailable(_) => 0,
        Failure::LoginRequired(_) => 1,
        Failure::RateLimited(_) => 2,
        Failure::UpstreamChanged(_) => 3,
        Failure::UpstreamError(_) => 4,
        Failure::UnsupportedUrl(_) => 5,
    };
    let mut best: Option<Failure> = None;
    for f in misses {
        if best.as_ref().is_none_or(|b| rank(&f) < rank(b)) {
            best = Some(f);
        }
    }
    best.unwrap_or_else(|| Failure::upstream("no strategy produced the post"))
}

// ---------------------------------------------------------------- share links

/// The post code a share link leads to, or the next hop to request.
fn resolve_share(target: &Target, done: &[Exchange]) -> Result<Result<String, HttpRequest>> {
    let hops: Vec<&Exchange> = done
        .iter()
        .filter(|e| !e.request.follow_redirects)
        .collect();
    let Some(last) = hops.last() else {
        return Ok(Err(share_request(&target.canonical_url)));
    };
    let response = &last.response;
    match response.status {
        429 => {
            return Err(Failure::RateLimited(
                "Instagram is rate-limiting share links".into(),
            ));
        }
        404 | 410 => return Err(Failure::unavailable("the share link does not exist")),
        _ if !response.is_redirect() => {
            return Err(Failure::changed(format!(
                "the share link answered HTTP {} instead of redirecting",
                response.status
            )));
        }
        _ => {}
    }
    let location = response
        .location()
        .ok_or_else(|| Failure::changed("the share link redirected without a Location"))?;
    let url = InputUrl::parse(&location)
        .map_err(|_| Failure::changed("the share link redirected to something not a URL"))?;
    if !url.host_in(&["instagram.com", "www.instagram.com"]) {
        return Err(Failure::unavailable(format!(
            "the share link leads off Instagram ({})",
            url.host
        )));
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    if let Some(code) = post_code(&segs) {
        return Ok(Ok(code));
    }
    match segs.first() {
        Some(&"accounts") => Err(Failure::LoginRequired(
            "the share link leads to Instagram's login page".into(),
        )),
        Some(&"share") if hops.len() < MAX_SHARE_HOPS => {
            let mut next = format!("{WWW}{}", url.url.path());
            if let Some(q) = url.url.query() {
                next.push('?');
                next.push_str(q);
            }
            Ok(Err(share_request(&next)))
        }
        Some(&"share") => Err(Failure::upstream("the share link redirects in circles")),
        None => Err(Failure::unavailable(
            "the share link leads to Instagram's home page, not a post",
        )),
        Some(_) => Err(Failure::unavailable(format!(
            "the share link leads to {}, not a post",
            url.url.path()
        ))),
    }
}

fn share_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", SHARE_UA)
        .header("Accept", "*/*")
        .no_redirects()
}

// ------------------------------------------------------------------ session

struct Session {
    cookie: String,
    csrf: Option<String>,
    lsd: Option<String>,
}

impl Session {
    fn read(home: &Exchange) -> Session {
        let cookies = set_cookies(&home.response);
        let csrf = cookies
            .iter()
            .rev()
            .find(|(n, _)| n == "csrftoken")
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty());
        let mut jar: Vec<(String, String)> = Vec::new();
        for (name, value) in cookies {
            match jar.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => jar.push((name, value)),
            }
        }
        let lsd = if home.response.is_success() {
            lsd_token(&home.response.text())
        } else {
            None
        };
        Session {
            cookie: mediaparse_sdk::cookies::join(&jar),
            csrf,
            lsd,
        }
    }
}

fn home_request() -> HttpRequest {
    HttpRequest::get(HOME)
        .header("User-Agent", CHROME_UA)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Sec-Fetch-Dest", "document")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Site", "none")
        .header("Upgrade-Insecure-Requests", "1")
        .cache_for(SESSION_TTL)
}

// ---------------------------------------------------------- strategy A

fn graphql_body(lsd: &str, pk: u64, ctx: &Context) -> String {
    let doc_id = ctx.config("doc_id").unwrap_or(DOC_ID);
    let variables = format!("{{\"media_id\":\"{pk}\"}}");
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("lsd", lsd)
        .append_pair("fb_api_caller_class", "RelayModern")
        .append_pair("fb_api_req_friendly_name", FRIENDLY_NAME)
        .append_pair("server_timestamps", "true")
        .append_pair("variables", &variables)
        .append_pair("doc_id", doc_id)
        .finish()
}

fn graphql_request(
    session: &Session,
    lsd: &str,
    body: String,
    post_url: &str,
    _ctx: &Context,
) -> HttpRequest {
    let mut request = HttpRequest::post(GRAPHQL, body)
        .header("User-Agent", CHROME_UA)
        .header("Accept", "*/*")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", WWW)
        .header("Referer", post_url)
        .header("X-IG-App-ID", APP_ID)
        .header("X-ASBD-ID", ASBD_ID)
        .header("X-IG-WWW-Claim", "0")
        .header("X-FB-Friendly-Name", FRIENDLY_NAME)
        .header("X-FB-LSD", lsd)
        .header("X-Requested-With", "XMLHttpRequest")
        .header("Sec-Fetch-Dest", "empty")
        .header("Sec-Fetch-Mode", "cors")
        .header("Sec-Fetch-Site", "same-origin");
    if let Some(csrf) = &session.csrf {
        request = request.header("X-CSRFToken", csrf);
    }
    if !session.cookie.is_empty() {
        request = request.header("Cookie", &session.cookie);
    }
    request
}

/// A JSON body, without Meta's `for (;;);` anti-hijack prefix.
fn json_body(ex: &Exchange) -> Option<Value> {
    let text = ex.response.text();
    let text = text.trim_start();
    let text = text.strip_prefix("for (;;);").unwrap_or(text);
    serde_json::from_str(text).ok()
}

fn eval_graphql(ex: &Exchange, code: &str) -> std::result::Result<Post, Miss> {
    let status = ex.response.status;
    if status == 429 {
        return Err(miss(Failure::RateLimited(
            "Instagram is rate-limiting anonymous GraphQL".into(),
        )));
    }
    if status != 200 {
        return Err(miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status}"
        ))));
    }
    let Some(json) = json_body(ex) else {
        return Err(miss(Failure::upstream(
            "the GraphQL query answered something other than JSON (blocked without a browser fingerprint?)",
        )));
    };
    let Some(media) = json.pointer("/data/xig_polaris_media") else {
        return Err(miss(Failure::changed(
            "the GraphQL answer has no data.xig_polaris_media",
        )));
    };
    if media.is_null() {
        return Err(miss(Failure::upstream("the GraphQL answer names no post")));
    }
    match media.get("if_not_gated_logged_out") {
        Some(item) if item.is_object() => checked_v1(item, code),
        Some(Value::Null) => Err(stop(Failure::LoginRequired(
            "Instagram shows this post only to signed-in users".into(),
        ))),
        _ => Err(miss(Failure::changed(
            "the GraphQL answer has no if_not_gated_logged_out member",
        ))),
    }
}

fn checked_v1(item: &Value, code: &str) -> std::result::Result<Post, Miss> {
    match item.get("code").and_then(Value::as_str) {
        Some(c) if c == code => Ok(Post::V1(item.clone())),
        Some(other) => Err(miss(Failure::upstream(format!(
            "Instagram answered with another post ({other})"
        )))),
        None => Err(miss(Failure::changed("the media item has no code"))),
    }
}

// ---------------------------------------------------------- strategy B

fn page_request(url: &str, session: &Session) -> HttpRequest {
    let mut request = HttpRequest::get(url)
        .header("User-Agent", CHROME_UA)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Sec-Fetch-Dest", "document")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Site", "none");
    if !session.cookie.is_empty() {
        request = request.header("Cookie", &session.cookie);
    }
    request
}

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

fn status_miss(ex: &Exchange, what: &str) -> Option<Miss> {
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

fn eval_page(ex: &Exchange, code: &str) -> std::result::Result<Post, Miss> {
    if let Some(m) = status_miss(ex, "post page") {
        return Err(m);
    }
    let html = ex.response.text();
    for blob in data_sjs_blobs(&html) {
        if !blob.contains(code) && !blob.contains("xig_polaris_media") {
            continue;
        }
        let Ok(json) = serde_json::from_str::<Value>(blob) else {
            continue;
        };
        if let Some(media) = find_key(&json, "xig_polaris_media") {
            match media.get("if_not_gated_logged_out") {
                Some(item) if item.is_object() => return checked_v1(item, code),
                Some(Value::Null) => {
                    return Err(stop(Failure::LoginRequired(
                        "Instagram shows this post only to signed-in users".into(),
                    )));
                }
                _ => {}
            }
        }
        if let Some(item) = find_key(&json, "xdt_api__v1__media__shortcode__web_info")
            .and_then(|w| w.pointer("/items/0"))
        {
            return checked_v1(item, code);
        }
        let pred = |m: &serde_json::Map<String, Value>| {
            m.get("code").and_then(Value::as_str) == Some(code)
                && (m.contains_key("image_versions2") || m.contains_key("carousel_media"))
        };
        if let Some(item) = find_object(&json, &pred) {
            return Ok(Post::V1(item.clone()));
        }
    }
    Err(miss(Failure::changed(
        "the post page carries no media JSON for this post",
    )))
}

// ---------------------------------------------------------- strategy C

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

fn eval_embed(ex: &Exchange, code: &str) -> std::result::Result<Post, Miss> {
    if let Some(m) = status_miss(ex, "embed page") {
        return Err(m);
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
                return Err(miss(Failure::changed(
                    "the embed page's contextJSON is not JSON",
                )));
            };
            if let Some(media) = context
                .pointer("/gql_data/shortcode_media")
                .filter(|m| m.is_object())
            {
                return match media.get("shortcode").and_then(Value::as_str) {
                    Some(c) if c == code => Ok(Post::Legacy(media.clone())),
                    Some(other) => Err(miss(Failure::upstream(format!(
                        "the embed page shows another post ({other})"
                    )))),
                    None => Err(miss(Failure::changed("the embed media has no shortcode"))),
                };
            }
        }
    }
    embed_html_image(&html, code)
}

/// The embed's HTML when its `contextJSON` is null: a single image only.
fn embed_html_image(html: &str, code: &str) -> std::result::Result<Post, Miss> {
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
    if html.contains("WatchOnInstagram")
        || matches!(kind.as_deref(), Some("GraphVideo" | "GraphSidecar"))
    {
        return Err(miss(Failure::upstream(
            "the embed page withholds this post's media (watch on Instagram)",
        )));
    }
    match image {
        Some((url, width)) => Ok(Post::EmbedImage {
            code: code.into(),
            url,
            width,
            media_id,
            owner_id,
            username,
        }),
        None => Err(miss(Failure::changed("the embed page carries no media"))),
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
