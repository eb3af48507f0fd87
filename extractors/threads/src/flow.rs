//! The request cascade (upstream/threads.md §2–3), re-derived from the
//! exchanges on every call: share-link hops, the post page rendered for
//! Googlebot, then the logged-out Barcelona GraphQL query.

use mediaparse_meta_web::shortcode;
use mediaparse_sdk::cookies::set_cookies;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, Result, Target};
use serde_json::Value;

use crate::detect::{WWW, canonical_post, is_share, post_path};
use crate::post::{CHROME_UA, is_post};
use mediaparse_meta_web::{data_sjs_blobs, find_object, lsd_token};

pub const HOME: &str = "https://www.threads.com/";
pub const GRAPHQL: &str = "https://www.threads.com/api/graphql";
pub const GOOGLEBOT_UA: &str =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
/// The Threads web app id (not Instagram's).
pub const APP_ID: &str = "238260118697367";
pub const ASBD_ID: &str = "359341";
/// `BarcelonaPostPageContentQuery`; operators may override it with the
/// `doc_id` config entry when Threads rotates it.
pub const DOC_ID: &str = "25460088156920903";
pub const FRIENDLY_NAME: &str = "BarcelonaPostPageContentQuery";
const MAX_SHARE_HOPS: usize = 3;
const SESSION_TTL: u32 = 1800;

pub enum Step {
    Fetch(Vec<HttpRequest>),
    Found(Value),
}

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
    let (user, code) = if is_share(target) {
        match resolve_share(target, done)? {
            Ok(found) => found,
            Err(hop) => return Ok(Step::Fetch(vec![hop])),
        }
    } else {
        canonical_post(target).ok_or_else(|| Failure::unsupported("not a Threads post URL"))?
    };
    if shortcode::is_private(&code) {
        return Err(Failure::unavailable(
            "this is a private post's link; private posts are unsupported",
        ));
    }
    let pk = shortcode::decode(&code)
        .ok_or_else(|| Failure::unsupported("the shortcode does not decode to a post id"))?;
    let post_url = format!("{WWW}/@{user}/post/{code}");
    let mut misses = Vec::new();

    // Strategy A: the server-rendered post page (Googlebot UA).
    match done
        .iter()
        .rev()
        .find(|e| e.request.url == post_url && e.request.follow_redirects)
    {
        None => return Ok(Step::Fetch(vec![ssr_request(&post_url)])),
        Some(ex) => match eval_ssr(ex, &code) {
            Ok(post) => return Ok(Step::Found(post)),
            Err(m) if m.definitive => return Err(m.failure),
            Err(m) => misses.push(m.failure),
        },
    }

    // Strategy B: homepage session + Barcelona GraphQL.
    let Some(home) = done.iter().rev().find(|e| e.request.url == HOME) else {
        return Ok(Step::Fetch(vec![home_request()]));
    };
    let session = Session::read(home);
    match &session.lsd {
        Some(lsd) => {
            let body = graphql_body(lsd, pk, ctx);
            match done.iter().rev().find(|e| {
                e.request.url == GRAPHQL && e.request.body.as_deref() == Some(body.as_bytes())
            }) {
                None => {
                    return Ok(Step::Fetch(vec![graphql_request(
                        &session, lsd, body, &post_url,
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
            "the Threads homepage gave no LSD token (HTTP {})",
            home.response.status
        ))),
    }
    Err(most_telling(misses))
}

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

fn resolve_share(
    target: &Target,
    done: &[Exchange],
) -> Result<Result<(String, String), HttpRequest>> {
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
                "Threads is rate-limiting share links".into(),
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
    if !url.host_in(&crate::detect::URL_HOSTS) {
        return Err(Failure::unavailable(format!(
            "the share link leads off Threads ({})",
            url.host
        )));
    }
    let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
    if let Some(found) = post_path(&segs) {
        return Ok(Ok(found));
    }
    match segs.first() {
        Some(&"share") if hops.len() < MAX_SHARE_HOPS => {
            let mut next = format!("{WWW}{}", url.url.path());
            if let Some(q) = url.url.query() {
                next.push('?');
                next.push_str(q);
            }
            Ok(Err(share_request(&next)))
        }
        Some(&"share") => Err(Failure::upstream("the share link redirects in circles")),
        // A gated post bounces to the home feed: never parse the feed.
        None => Err(Failure::unavailable(
            "the share link leads to the Threads home feed, not a post (gated or private)",
        )),
        Some(&("accounts" | "login")) => Err(Failure::unavailable(
            "the share link leads to the login page (gated or private post)",
        )),
        Some(_) => Err(Failure::unavailable(format!(
            "the share link leads to {}, not a post",
            url.url.path()
        ))),
    }
}

fn share_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", CHROME_UA)
        .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .no_redirects()
}

// ---------------------------------------------------------- strategy A

fn ssr_request(url: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", GOOGLEBOT_UA)
        .header("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
        .header("Accept-Language", "en-US,en;q=0.9")
}

fn eval_ssr(ex: &Exchange, code: &str) -> std::result::Result<Value, Miss> {
    if let Ok(url) = InputUrl::parse(&ex.response.final_url) {
        if url.query("error").as_deref() == Some("invalid_post") {
            return Err(stop(Failure::unavailable(
                "Threads says the post is invalid (deleted)",
            )));
        }
        match url.segments.first().map(String::as_str) {
            None => {
                return Err(stop(Failure::unavailable(
                    "the post page bounced to the home feed (gated or private post)",
                )));
            }
            Some("accounts" | "login") => {
                return Err(miss(Failure::RateLimited(
                    "Threads redirected to its login page (throttling)".into(),
                )));
            }
            _ => {}
        }
    }
    match ex.response.status {
        200 => {}
        404 | 410 => {
            return Err(stop(Failure::unavailable(
                "the post does not exist or was deleted",
            )));
        }
        429 => {
            return Err(miss(Failure::RateLimited(
                "Threads is rate-limiting the post page".into(),
            )));
        }
        s => {
            return Err(miss(Failure::upstream(format!(
                "the post page answered HTTP {s}"
            ))));
        }
    }
    let html = ex.response.text();
    for blob in data_sjs_blobs(&html) {
        if !blob.contains(code) {
            continue;
        }
        let Ok(json) = serde_json::from_str::<Value>(blob) else {
            continue;
        };
        if let Some(post) = find_object(&json, &|m| is_post(m, code)) {
            return Ok(post.clone());
        }
    }
    Err(miss(Failure::changed(
        "the post page carries no post object for this shortcode (empty shell or new layout)",
    )))
}

// ---------------------------------------------------------- strategy B

struct Session {
    cookie: String,
    csrf: Option<String>,
    lsd: Option<String>,
}

impl Session {
    fn read(home: &Exchange) -> Session {
        let mut jar: Vec<(String, String)> = Vec::new();
        for (name, value) in set_cookies(&home.response) {
            match jar.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => jar.push((name, value)),
            }
        }
        let csrf = jar
            .iter()
            .find(|(n, _)| n == "csrftoken")
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty());
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

fn graphql_body(lsd: &str, pk: u64, ctx: &Context) -> String {
    let doc_id = ctx.config("doc_id").unwrap_or(DOC_ID);
    let variables = format!("{{\"postID\":\"{pk}\"}}");
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("av", "0")
        .append_pair("__user", "0")
        .append_pair("__a", "1")
        .append_pair("lsd", lsd)
        .append_pair("fb_api_caller_class", "RelayModern")
        .append_pair("fb_api_req_friendly_name", FRIENDLY_NAME)
        .append_pair("server_timestamps", "true")
        .append_pair("variables", &variables)
        .append_pair("doc_id", doc_id)
        .finish()
}

fn graphql_request(session: &Session, lsd: &str, body: String, post_url: &str) -> HttpRequest {
    let mut request = HttpRequest::post(GRAPHQL, body)
        .header("User-Agent", CHROME_UA)
        .header("Accept", "*/*")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("Origin", WWW)
        .header("Referer", post_url)
        .header("X-IG-App-ID", APP_ID)
        .header("X-ASBD-ID", ASBD_ID)
        .header("X-FB-Friendly-Name", FRIENDLY_NAME)
        .header("X-FB-LSD", lsd)
        // Without these Meta answers error 1357055.
        .header("Sec-Fetch-Site", "same-origin")
        .header("Sec-Fetch-Mode", "cors")
        .header("Sec-Fetch-Dest", "empty");
    if let Some(csrf) = &session.csrf {
        request = request.header("X-CSRFToken", csrf);
    }
    if !session.cookie.is_empty() {
        request = request.header("Cookie", &session.cookie);
    }
    request
}

fn eval_graphql(ex: &Exchange, code: &str) -> std::result::Result<Value, Miss> {
    let status = ex.response.status;
    if status == 429 {
        return Err(miss(Failure::RateLimited(
            "Threads is rate-limiting anonymous GraphQL".into(),
        )));
    }
    let text = ex.response.text();
    let trimmed = text.trim_start();
    let body = trimmed.strip_prefix("for (;;);").unwrap_or(trimmed);
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        return Err(miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status} without JSON"
        ))));
    };
    if let Some(error) = json.get("error").filter(|e| !e.is_null()) {
        let summary = json
            .get("errorSummary")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(miss(Failure::upstream(format!(
            "the GraphQL query failed: error {error} {summary}"
        ))));
    }
    if status != 200 {
        return Err(miss(Failure::upstream(format!(
            "the GraphQL query answered HTTP {status}"
        ))));
    }
    let Some(data) = json.get("data").filter(|d| !d.is_null()) else {
        return Err(miss(Failure::changed("the GraphQL answer has no data")));
    };
    match find_object(data, &|m| is_post(m, code)) {
        Some(post) => Ok(post.clone()),
        None => Err(miss(Failure::changed(
            "the GraphQL answer holds no post with this shortcode",
        ))),
    }
}
