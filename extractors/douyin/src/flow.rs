//! The upstream rounds. Extractors keep no state, so every call re-reads
//! `done` and walks the same decision list: short-link hops, then
//! slidesinfo (and its `request_source=200` retry), the share page (one
//! retry on an empty frame), and the web API when the operator set `cookie`.

use mediaparse_sdk::cascade::{self, Attempt, Cascade};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, Result, Step, Target, ua};
use serde_json::Value;

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

pub fn slidesinfo_url(id: &str, request_source: bool) -> String {
    let web_id = derived_digits(id, "web_id");
    let device_id = derived_digits(id, "device_id");
    let a_bogus = derived_token(id, "a_bogus", 64);
    let source = if request_source {
        "&request_source=200"
    } else {
        ""
    };
    format!(
        "https://www.iesdouyin.com/web/api/v2/aweme/slidesinfo/?reflow_source=reflow_page&web_id={web_id}&device_id={device_id}&aweme_ids=%5B{id}%5D{source}&a_bogus={a_bogus}"
    )
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

/// An aweme a strategy found, mapped; a miss passed on.
fn found(attempt: Attempt<Value>) -> Result<Attempt<Step>> {
    Ok(match attempt {
        Attempt::Got(aweme) => Attempt::Got(Step::Done(map::post_extraction(aweme)?)),
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
            // Only an empty answer (no post for this id) is worth the retry.
            Attempt::Missed(miss) => {
                let retry = matches!(miss, Failure::Unavailable(_));
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

/// FNV-1a, then splitmix64: deterministic stand-ins for the random device
/// values other clients send (the endpoint does not verify them).
fn stream(id: &str, salt: &str) -> impl Iterator<Item = u64> {
    let mut state = 0xcbf2_9ce4_8422_2325u64;
    for b in salt.bytes().chain([b':']).chain(id.bytes()) {
        state ^= u64::from(b);
        state = state.wrapping_mul(0x0000_0100_0000_01b3);
    }
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// "75" followed by 15 digits, like the app's device ids.
fn derived_digits(id: &str, salt: &str) -> String {
    let digits: String = stream(id, salt)
        .take(15)
        .map(|n| char::from(b'0' + (n % 10) as u8))
        .collect();
    format!("75{digits}")
}

fn derived_token(id: &str, salt: &str, len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    stream(id, salt)
        .take(len)
        .map(|n| char::from(ALPHABET[(n % ALPHABET.len() as u64) as usize]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_values_are_stable_and_well_formed() {
        let a = derived_digits("6961737553342991651", "device_id");
        assert_eq!(a, derived_digits("6961737553342991651", "device_id"));
        assert_eq!(a.len(), 17);
        assert!(a.starts_with("75") && a.bytes().all(|b| b.is_ascii_digit()));
        assert_ne!(a, derived_digits("6961737553342991651", "web_id"));
        let t = derived_token("1", "a_bogus", 64);
        assert_eq!(t.len(), 64);
        assert!(t.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
