//! The request cascade (upstream/threads.md §2–3), re-derived from the
//! exchanges on every call: share-link hops, the post page rendered for
//! Googlebot, then the homepage session and the logged-out Barcelona
//! GraphQL query.

use mediaparse_meta_web::cascade::{Cascade, Judged, Next, found, miss, rank, stop, strategy};
use mediaparse_meta_web::graphql::{Query, json_text};
use mediaparse_meta_web::session::home_request;
use mediaparse_meta_web::share::{Hop, ShareLinks};
use mediaparse_meta_web::{CHROME_UA, data_sjs_blobs, scan, shortcode};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::{self, RawValue, Text, kind_of};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, Result, Step, Target};
use serde_json::Value;

use crate::map::is_post;
use crate::urls::{URL_HOSTS, WWW, canonical_post, is_share, post_ref};

pub const HOME: &str = "https://www.threads.com/";
pub const GRAPHQL: &str = "https://www.threads.com/api/graphql";
pub const GOOGLEBOT_UA: &str = mediaparse_sdk::ua::GOOGLEBOT;
/// The Threads web app id (not Instagram's).
pub const APP_ID: &str = "238260118697367";
/// `BarcelonaPostPageContentQuery`; operators may override it with the
/// `doc_id` config entry when Threads rotates it.
pub const DOC_ID: &str = "25460088156920903";
pub const FRIENDLY_NAME: &str = "BarcelonaPostPageContentQuery";
/// The client hints of `CHROME_UA` (Chrome 140 on Windows).
const CHROME_SEC_CH_UA: &str =
    "\"Chromium\";v=\"140\", \"Not=A?Brand\";v=\"24\", \"Google Chrome\";v=\"140\"";

const QUERY: Query<'static> = Query {
    endpoint: GRAPHQL,
    origin: WWW,
    app_id: APP_ID,
    friendly_name: FRIENDLY_NAME,
    doc_id: DOC_ID,
    leading_pairs: &[("av", "0"), ("__user", "0"), ("__a", "1")],
    extra_headers: &[],
    user_agent: CHROME_UA,
};

const SHARE_LINKS: ShareLinks<'static, (String, String)> = ShareLinks {
    site: "Threads",
    www: WWW,
    hosts: &URL_HOSTS,
    request: share_request,
    arrived: post_ref,
    dead_end: share_dead_end,
};

/// The flow: the next requests, or the post found and mapped.
pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    find_post(target, ctx, done)?.into_step(|post| crate::map::map(&post))
}

fn find_post(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Next<Box<RawValue>>> {
    let (code, post_url) = if is_share(target) {
        match SHARE_LINKS.follow(&target.canonical_url, done)? {
            Hop::Arrived(found) => found,
            Hop::Next(hop) => return Ok(Next::Fetch(vec![hop])),
        }
    } else {
        canonical_post(target).ok_or_else(|| Failure::unsupported("not a Threads post URL"))?
    };
    let pk = shortcode::post_pk(&code)?;
    // Strategy A: the server-rendered post page (Googlebot UA; a legacy
    // `/t/` URL is followed to the post).
    let page_answer = |user_agent: &str| {
        done.last_where(|e| {
            e.request.url == post_url
                && e.request.follow_redirects
                && e.request.header_value("User-Agent") == Some(user_agent)
        })
    };
    let ssr = || {
        strategy(
            page_answer(GOOGLEBOT_UA),
            || ssr_request(&post_url),
            |ex| eval_ssr(ex, &code),
        )
    };
    // Strategy A2: the same page as a browser navigation (Threads serves a
    // logged-out gating shell to requests without the full header set).
    let browser = || {
        strategy(
            page_answer(CHROME_UA),
            || browser_page_request(&post_url),
            |ex| eval_ssr(ex, &code),
        )
    };
    // Strategy B: homepage session + Barcelona GraphQL.
    let graphql = || {
        let Some(home) = done.last_at(HOME) else {
            return found(Next::Fetch(vec![home_request(HOME, CHROME_UA)]));
        };
        let variables = format!("{{\"postID\":\"{pk}\"}}");
        QUERY.strategy(home, &variables, &post_url, ctx, done, |ex| {
            eval_graphql(ex, &code)
        })
    };
    Cascade::new()
        .attempt(ssr)
        .attempt(browser)
        .attempt(graphql)
        .finish_ranked(rank)
}

// ---------------------------------------------------------------- share links

fn share_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", CHROME_UA)
        .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .no_redirects()
}

fn share_dead_end(first: Option<&str>, path: &str) -> Failure {
    match first {
        // A gated post bounces to the home feed: never parse the feed.
        None => Failure::unavailable(
            "the share link leads to the Threads home feed, not a post (gated or private)",
        ),
        Some("accounts" | "login") => {
            Failure::unavailable("the share link leads to the login page (gated or private post)")
        }
        Some(_) => Failure::unavailable(format!("the share link leads to {path}, not a post")),
    }
}

// ---------------------------------------------------------- strategy A

fn ssr_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", GOOGLEBOT_UA)
        .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .header("Accept-Language", "en-US,en;q=0.9")
}

/// The post page with the headers a desktop Chrome sends for a typed-in
/// navigation, in Chrome's order.
fn browser_page_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("Cache-Control", "max-age=0")
        .header("Sec-Ch-Ua", CHROME_SEC_CH_UA)
        .header("Sec-Ch-Ua-Mobile", "?0")
        .header("Sec-Ch-Ua-Platform", "\"Windows\"")
        .header("Upgrade-Insecure-Requests", "1")
        .header("User-Agent", CHROME_UA)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
        )
        .header("Sec-Fetch-Site", "none")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-User", "?1")
        .header("Sec-Fetch-Dest", "document")
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Priority", "u=0, i")
}

fn eval_ssr(ex: &Exchange, code: &str) -> Judged<Box<RawValue>> {
    if let Ok(url) = InputUrl::parse(&ex.response.final_url) {
        if url.query("error").as_deref() == Some("invalid_post") {
            return stop(Failure::unavailable(
                "Threads says the post is invalid (deleted)",
            ));
        }
        match url.segments.first().map(String::as_str) {
            None => {
                return stop(Failure::unavailable(
                    "the post page bounced to the home feed (gated or private post)",
                ));
            }
            Some("accounts" | "login") => {
                return miss(Failure::RateLimited(
                    "Threads redirected to its login page (throttling)".into(),
                ));
            }
            _ => {}
        }
    }
    match ex.response.status {
        200 => {}
        404 | 410 => {
            return stop(Failure::unavailable(
                "the post does not exist or was deleted",
            ));
        }
        429 => {
            return miss(Failure::RateLimited(
                "Threads is rate-limiting the post page".into(),
            ));
        }
        s => {
            return miss(Failure::upstream(format!(
                "the post page answered HTTP {s}"
            )));
        }
    }
    let html = ex.response.text();
    for blob in data_sjs_blobs(&html) {
        if !blob.contains(code) {
            continue;
        }
        if let Some(post) = scan::find_object(blob, |m| is_post(m, code)) {
            return found(post.to_owned());
        }
    }
    miss(Failure::changed(
        "the post page carries no post object for this shortcode (empty shell or new layout)",
    ))
}

// ---------------------------------------------------------- strategy B

fn eval_graphql(ex: &Exchange, code: &str) -> Judged<Box<RawValue>> {
    let status = ex.response.status;
    if status == 429 {
        return miss(Failure::RateLimited(
            "Threads is rate-limiting anonymous GraphQL".into(),
        ));
    }
    let text = ex.response.text();
    let Some(json) = json_text(&text) else {
        return miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status} without JSON"
        )));
    };
    if let Some(error) = fields::at(Some(json), &["error"]).filter(|e| kind_of(e) != b'n') {
        let error: Value = serde_json::from_str(error.get()).unwrap_or_default();
        let summary = fields::at(Some(json), &["errorSummary"])
            .filter(|s| kind_of(s) == b'"')
            .and_then(|s| serde_json::from_str::<Text>(s.get()).ok())
            .unwrap_or_default();
        return miss(Failure::upstream(format!(
            "the GraphQL query failed: error {error} {}",
            summary.as_str()
        )));
    }
    if status != 200 {
        return miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status}"
        )));
    }
    let Some(data) = fields::at(Some(json), &["data"]).filter(|d| kind_of(d) != b'n') else {
        return miss(Failure::changed("the GraphQL answer has no data"));
    };
    match scan::find_object(data.get(), |m| is_post(m, code)) {
        Some(post) => found(post.to_owned()),
        None => miss(Failure::changed(
            "the GraphQL answer holds no post with this shortcode",
        )),
    }
}
