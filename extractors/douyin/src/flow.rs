//! The upstream rounds. Extractors keep no state, so every call re-reads
//! `done` and walks the same decision list: short-link hops, then
//! slidesinfo (and its `request_source=200` retry), the share page (one
//! retry on an empty frame), and the web API when the operator set `cookie`.

use mediaparse_sdk::cascade::{self, Attempt, Cascade};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Failure, HttpRequest, Result, Step, Target, ua,
};

use crate::map;
use crate::urls::{self, Link};

/// `v.douyin.com` short links.
const SHORT_LINKS: ShortLinks = ShortLinks {
    link: "the short link",
    post: "a Douyin post",
    max_hops: 3,
    hosts: &["v.douyin.com"],
};

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let link = urls::classify(&InputUrl::parse(&target.canonical_url)?)?;
    let (id, note) = match link {
        Link::Direct { .. } => return Ok(Step::Done(map::direct_extraction(&link))),
        Link::Post { id, note } => (id, note),
        Link::Short { code } => match resolve_short(&code, done)? {
            Followed::Arrived { post, .. } => post,
            Followed::Fetch(request) => return Ok(Step::one(request)),
        },
    };
    let cookie = ctx.config("cookie");
    Cascade::new()
        .attempt(|| slidesinfo(&id, note, done))
        .attempt(|| share_page(&id, note, done))
        // Only with the operator's browser cookie.
        .attempt_if(cookie.is_some(), || {
            web_api(&id, cookie.unwrap_or_default(), done)
        })
        .finish()
}

/// Follow `v.douyin.com` redirects (fetched hop by hop) to a post id.
fn resolve_short<'d>(code: &str, done: &'d [Exchange]) -> Result<Followed<'d, (String, bool)>> {
    SHORT_LINKS.follow(
        &urls::short_url(code),
        done,
        |url, _| mobile_get(url.to_string()).no_redirects(),
        |landing| match urls::classify(landing) {
            Ok(Link::Post { id, note }) => Landing::Arrived((id, note)),
            Ok(Link::Short { code }) => Landing::Hop(urls::short_url(&code)),
            Ok(Link::Direct { .. }) | Err(_) => Landing::Elsewhere,
        },
    )
}

/// The anonymous slidesinfo lookup: only `aweme_ids` (and `request_source=200`
/// for notes). Since 2026-08 a request carrying an unverifiable `a_bogus` (and
/// the device ids that came with it) gets an empty body, while the bare form
/// answers (parse-video-py 1519a91/dab1270, PR #95, 2026-08-19).
pub fn slidesinfo_url(id: &str, request_source: bool) -> String {
    let source = if request_source {
        "&request_source=200"
    } else {
        ""
    };
    format!("https://www.iesdouyin.com/web/api/v2/aweme/slidesinfo/?aweme_ids=%5B{id}%5D{source}")
}

pub fn share_page_url(id: &str, note: bool) -> String {
    let kind = if note { "note" } else { "video" };
    format!("https://www.iesdouyin.com/share/{kind}/{id}/")
}

pub fn web_api_url(id: &str) -> String {
    format!(
        "https://www.douyin.com/aweme/v1/web/aweme/detail/?device_platform=webapp&aid=6383&channel=channel_pc_web&aweme_id={id}&pc_client_type=1&version_code=190500&version_name=19.5.0&cookie_enabled=true&screen_width=1920&screen_height=1080&browser_language=zh-CN&browser_platform=Win32&browser_name=Chrome&browser_version=130.0.0.0&browser_online=true&engine_name=Blink&engine_version=130.0.0.0&os_name=Windows&os_version=10&cpu_core_num=8&device_memory=8&platform=PC&downlink=10&effective_type=4g&round_trip_time=50"
    )
}

fn mobile_get(url: String) -> HttpRequest {
    HttpRequest::get(url).header("User-Agent", ua::SAFARI_17_IPHONE)
}

/// An aweme a strategy found and mapped; a miss passed on.
fn found(attempt: Attempt<Extraction>) -> Result<Attempt<Step>> {
    Ok(match attempt {
        Attempt::Got(extraction) => Attempt::Got(Step::Done(extraction)),
        Attempt::Missed(miss) => Attempt::Missed(miss),
    })
}

/// Strategy 1: slidesinfo; notes need `request_source=200`, and a video
/// lookup that comes back empty is retried with it.
fn slidesinfo(id: &str, note: bool, done: &[Exchange]) -> Result<Attempt<Step>> {
    let mut urls = vec![slidesinfo_url(id, note)];
    if !note {
        urls.push(slidesinfo_url(id, true));
    }
    let mut misses = Vec::new();
    for url in urls {
        let Some(exchange) = done.last_at(&url) else {
            return Ok(Attempt::Got(Step::one(mobile_get(url))));
        };
        match map::read_slidesinfo(&exchange.response)? {
            Attempt::Got(aweme) => return found(Attempt::Got(aweme)),
            // An empty list or an empty body is worth the retry with
            // `request_source=200` (notes answer only with it).
            Attempt::Missed(miss) => {
                let retry = matches!(miss, Failure::Unavailable(_))
                    || map::is_empty_frame(&exchange.response);
                misses.push(miss);
                if !retry {
                    break;
                }
            }
        }
    }
    Ok(Attempt::Missed(
        cascade::most_telling(misses, cascade::telling)
            .unwrap_or_else(|| Failure::changed("slidesinfo was not asked")),
    ))
}

/// Strategy 2: the share page's `_ROUTER_DATA`, once more on an empty frame.
fn share_page(id: &str, note: bool, done: &[Exchange]) -> Result<Attempt<Step>> {
    let url = share_page_url(id, note);
    let answers: Vec<_> = done.iter().filter(|e| e.request.url == url).collect();
    let Some(last) = answers.last() else {
        return Ok(Attempt::Got(Step::one(mobile_get(url))));
    };
    if map::is_empty_frame(&last.response) && answers.len() < 2 {
        return Ok(Attempt::Got(Step::one(mobile_get(url))));
    }
    found(map::read_share_page(&last.response)?)
}

/// Strategy 3: the web detail API with the operator's cookie.
fn web_api(id: &str, cookie: &str, done: &[Exchange]) -> Result<Attempt<Step>> {
    let url = web_api_url(id);
    let Some(exchange) = done.last_at(&url) else {
        let request = HttpRequest::get(url)
            .header("User-Agent", ua::CHROME_130_WINDOWS)
            .header("Referer", format!("https://www.douyin.com/video/{id}"))
            .header("Cookie", cookie);
        return Ok(Attempt::Got(Step::one(request)));
    };
    found(map::read_web_api(&exchange.response)?)
}
