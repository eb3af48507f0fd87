//! TikTok: the post page's `__UNIVERSAL_DATA_FOR_REHYDRATION__` blob
//! (guide `upstream/tiktok.md`, strategy A), with the WAF proof-of-work
//! challenge solved in the extractor and short links resolved through their
//! redirects. Notes beyond the guide: `docs/platforms/tiktok.md`.
//!
//! Rounds: [short-link hops] → post page → [page again after a challenge,
//! a same-post redirect, or once more when the page came without data] →
//! [strategy B, the app API, when the operator configured an `iid` and the
//! page failed with an anti-bot, network-block or layout signal].

mod app;
mod challenge;
mod links;
mod map;
mod page;

use mediaparse_sdk::cookies;
use mediaparse_sdk::serde_json::Value;
use mediaparse_sdk::share::first_url;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Header, HttpRequest, Info, Plan, Result,
    Target,
};

pub use links::{Landing, Link, Post, Short, classify, landing};

pub const PLATFORM: &str = "tiktok";

/// The desktop browser we present as, for the page and for media downloads.
pub const USER_AGENT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36";
const ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const ACCEPT_LANGUAGE: &str = "en-US,en;q=0.9";
const REFERER: &str = "https://www.tiktok.com/";

/// Redirect hops a short link may take before it must name a post.
const MAX_SHORT_HOPS: usize = 4;
/// Page requests per parse: first try, challenge answer, one retry, one redirect.
const MAX_PAGE_REQUESTS: usize = 4;

pub struct TikTok;

impl Extractor for TikTok {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.tiktok.com".into(), "*.tiktokv.com".into()],
            api_hosts: vec![
                "www.tiktok.com".into(),
                "vt.tiktok.com".into(),
                app::HOST.into(),
            ],
            url_shapes: [
                "/@{user}/video/{id}",
                "/@{user}/photo/{id}",
                "/t/{code}",
                "vm.tiktok.com/{code}, vt.tiktok.com/{code}",
                "/share/video/{id}, /i18n/share/video/{id} (alias)",
                "/embed/{id}, /embed/v2/{id} (alias)",
                "m.tiktok.com/v/{id}.html (alias)",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        // The app copies bare URLs; text around one is tolerated.
        let text = first_url(input).unwrap_or_else(|| input.trim().to_string());
        let url = InputUrl::parse(&text)?;
        let (id, canonical_url) = match classify(&url) {
            Some(Link::Post(post)) => (post.id.clone(), post.canonical_url()),
            Some(Link::Short(short)) => (short.code, short.canonical),
            None => {
                return Err(Failure::unsupported(
                    "not a single TikTok post (profiles, live, sounds, tags, search, collections and playlists are not supported)",
                ));
            }
        };
        Ok(Target {
            platform: PLATFORM.into(),
            id,
            canonical_url,
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        let post = match resolve(target, done)? {
            Resolved::Post(post) => post,
            Resolved::Fetch(request) => return Ok(Plan::one(request)),
        };
        if done.iter().any(app::is_app) {
            return Ok(Plan::Ready);
        }
        match page_step(&post, done) {
            Ok(Step::Fetch(request)) => Ok(Plan::one(request)),
            Ok(Step::Ready(_)) => Ok(Plan::Ready),
            Err(failure) => match app::AppInfo::from_config(ctx) {
                // Strategy B, only on the failure signals the app API can get past.
                Some(info) if falls_back(&failure) => {
                    Ok(Plan::one(info.request(&post.id, ctx.now_unix_ms)))
                }
                _ => Err(failure),
            },
        }
    }

    fn map(target: &Target, _ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        let Resolved::Post(post) = resolve(target, done)? else {
            return Err(Failure::upstream("the short link was not resolved"));
        };
        if let Some(exchange) = done.iter().rev().find(|e| app::is_app(e)) {
            let aweme = app::aweme(&exchange.response, &post.id)?;
            return Ok(Extraction {
                media: app::media(&aweme)?,
                platform_data: app::platform_data(&aweme),
            });
        }
        let Step::Ready(item) = page_step(&post, done)? else {
            return Err(Failure::upstream("the post page was not fetched"));
        };
        let media = map::media(&item, &media_headers(done))?;
        Ok(Extraction {
            media,
            platform_data: map::platform_data(&item),
        })
    }
}

mediaparse_sdk::export_extractor!(TikTok);

/// Page failures the app API may get past: the anti-bot challenge, a
/// refused or data-less page, and the statuses TikTok gives datacenter
/// networks (10204, 10231; guide §3).
fn falls_back(failure: &Failure) -> bool {
    match failure {
        Failure::RateLimited(_) | Failure::UpstreamChanged(_) | Failure::UpstreamError(_) => true,
        Failure::Unavailable(message) => page::is_network_block(message),
        Failure::UnsupportedUrl(_) | Failure::LoginRequired(_) => false,
    }
}

enum Resolved {
    Post(Post),
    Fetch(HttpRequest),
}

/// The post a target names, following a short link's recorded hops; the
/// next hop to fetch when the chain is not complete yet.
fn resolve(target: &Target, done: &[Exchange]) -> Result<Resolved> {
    let url = InputUrl::parse(&target.canonical_url)?;
    let mut next = match classify(&url) {
        Some(Link::Post(post)) => return Ok(Resolved::Post(post)),
        Some(Link::Short(short)) => short.fetch_url,
        None => return Err(Failure::unsupported("not a single TikTok post")),
    };
    for _ in 0..MAX_SHORT_HOPS {
        let Some(exchange) = done.iter().find(|e| e.request.url == next) else {
            return Ok(Resolved::Fetch(short_link_request(&next)));
        };
        let response = &exchange.response;
        let location = response.location().filter(|_| response.is_redirect());
        let Some(location) = location else {
            return Err(match response.status {
                404 | 410 => Failure::unavailable("the short link does not exist (HTTP 404)"),
                403 | 429 => Failure::RateLimited(format!(
                    "TikTok refused the short link (HTTP {})",
                    response.status
                )),
                status => Failure::changed(format!(
                    "the short link answered HTTP {status} without a redirect"
                )),
            });
        };
        match landing(&location)? {
            Landing::Post(post) => return Ok(Resolved::Post(post)),
            Landing::Short(url) => next = url,
        }
    }
    Err(Failure::changed("the short link redirects too many times"))
}

fn short_link_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .no_redirects()
        .header("User-Agent", USER_AGENT)
}

/// Is this exchange a request for a post page (not a short-link hop)?
fn is_page(exchange: &Exchange) -> bool {
    InputUrl::parse(&exchange.request.url)
        .ok()
        .is_some_and(|u| {
            u.host == "www.tiktok.com" && !matches!(classify(&u), Some(Link::Short(_)))
        })
}

enum Step {
    Fetch(HttpRequest),
    Ready(Value),
}

/// Where the post-page conversation stands: the next page request, the
/// post's `itemStruct`, or the error the answers amount to (guide §6).
fn page_step(post: &Post, done: &[Exchange]) -> Result<Step> {
    let pages: Vec<&Exchange> = done.iter().filter(|e| is_page(e)).collect();
    let Some((last, earlier)) = pages.split_last() else {
        return Ok(Step::Fetch(page_request(&post.page_url(), &[])));
    };
    let received = received_cookies(&pages);
    let exhausted = pages.len() >= MAX_PAGE_REQUESTS;
    match page::analyze(&last.response, &post.id)? {
        page::Page::Item(item) => Ok(Step::Ready(item)),
        page::Page::Challenge => {
            if earlier.iter().any(|e| is_challenge_answer(e)) || exhausted {
                return Err(Failure::RateLimited(
                    "TikTok served its anti-bot challenge again after it was solved".into(),
                ));
            }
            let mut cookies = challenge::solve(&last.response.text())?;
            cookies.extend(received);
            Ok(Step::Fetch(page_request(&last.request.url, &cookies)))
        }
        page::Page::NoData { canonical } => {
            let retried = earlier.iter().any(|e| is_data_less(e));
            if retried || exhausted {
                return Err(Failure::changed(
                    "the post page has no rehydration data and no challenge (twice)",
                ));
            }
            // gallery-dl: a page without the post names its canonical URL.
            let url = canonical
                .filter(|c| same_post_on_www(c, &post.id))
                .unwrap_or_else(|| last.request.url.clone());
            Ok(Step::Fetch(page_request(&url, &received)))
        }
        page::Page::Redirect(location) => {
            let path = InputUrl::parse(&location)
                .map(|u| u.segments)
                .unwrap_or_default();
            if path.first().is_some_and(|s| s == "login") {
                return Err(Failure::LoginRequired(
                    "TikTok shows this post only to signed-in users".into(),
                ));
            }
            if same_post_on_www(&location, &post.id) && !exhausted {
                return Ok(Step::Fetch(page_request(&location, &received)));
            }
            Err(Failure::unavailable(
                "TikTok redirected the post page away from the post",
            ))
        }
    }
}

/// A page answer that was a challenge (so the next request answered it).
fn is_challenge_answer(exchange: &Exchange) -> bool {
    !exchange.response.is_redirect() && challenge::is_challenge(&exchange.response.text())
}

/// A 2xx page answer without the post and without a challenge. Earlier page
/// answers never held the post (the conversation stops there), so a 2xx
/// that was not a challenge was a page without data.
fn is_data_less(exchange: &Exchange) -> bool {
    exchange.response.is_success() && !challenge::is_challenge(&exchange.response.text())
}

fn same_post_on_www(url: &str, id: &str) -> bool {
    InputUrl::parse(url).ok().is_some_and(|u| {
        u.host == "www.tiktok.com" && matches!(classify(&u), Some(Link::Post(p)) if p.id == id)
    })
}

fn page_request(url: &str, cookies: &[(String, String)]) -> HttpRequest {
    let mut request = HttpRequest::get(url)
        .no_redirects()
        .header("User-Agent", USER_AGENT)
        .header("Accept", ACCEPT)
        .header("Accept-Language", ACCEPT_LANGUAGE);
    if !cookies.is_empty() {
        request = request.header("Cookie", cookies::join(cookies));
    }
    request
}

/// Every cookie the page answers set, a later value replacing an earlier one.
fn received_cookies(pages: &[&Exchange]) -> Vec<(String, String)> {
    let mut jar: Vec<(String, String)> = Vec::new();
    for exchange in pages {
        for (name, value) in cookies::set_cookies(&exchange.response) {
            match jar.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => jar.push((name, value)),
            }
        }
    }
    jar
}

/// What a caller needs to download the video and audio URLs (guide §7):
/// the Referer, our User-Agent, and the anonymous `tt_chain_token` cookie
/// the page handed out (the URLs carry `tk=tt_chain_token`).
fn media_headers(done: &[Exchange]) -> Vec<Header> {
    let pages: Vec<&Exchange> = done.iter().filter(|e| is_page(e)).collect();
    let mut headers = vec![
        Header::new("Referer", REFERER),
        Header::new("User-Agent", USER_AGENT),
    ];
    if let Some((_, token)) = received_cookies(&pages)
        .into_iter()
        .find(|(n, v)| n == "tt_chain_token" && !v.is_empty())
    {
        headers.push(Header::new("Cookie", format!("tt_chain_token={token}")));
    }
    headers
}
