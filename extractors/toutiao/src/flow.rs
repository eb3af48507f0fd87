//! The upstream rounds, re-derived from `done` on every call: `/is/` hops,
//! the ttwid registration, the desktop page, the mobile page (+ VOD), the
//! legacy info answer.

use mediaparse_sdk::cookies::cookie_value;
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, HttpRequest, HttpResponse, Result, Step, Target, ua};

use crate::map::{self, Found, Mobile};
use crate::urls::{self, Link};

pub const REGISTER_URL: &str = "https://ttwid.bytedance.com/ttwid/union/register/";
pub const REGISTER_BODY: &str =
    r#"{"aid":24,"needFid":false,"region":"cn","service":"www.toutiao.com","union":true}"#;
/// How long the host may reuse one registration answer.
const TTWID_CACHE_SECONDS: u32 = 6 * 3600;

/// `/is/{code}` share links and where they may lead.
const SHARE_LINKS: ShortLinks = ShortLinks {
    link: "the share link",
    post: "a Toutiao video",
    max_hops: 3,
    hosts: &["m.toutiao.com"],
};

pub fn desktop_url(id: &str) -> String {
    format!("https://www.toutiao.com/video/{id}/")
}
pub fn mobile_url(id: &str) -> String {
    format!("https://m.toutiao.com/video/{id}/")
}
pub fn legacy_url(id: &str) -> String {
    format!("https://m.toutiao.com/i{id}/info/")
}

fn last<'a>(done: &'a [Exchange], url: &str) -> Option<&'a HttpResponse> {
    done.last_at(url).map(|e| &e.response)
}

fn mobile_get(url: String) -> Step {
    Step::one(HttpRequest::get(url).header("User-Agent", ua::SAFARI_17_IPHONE))
}

fn found(found: Found) -> Step {
    Step::Done(map::extraction(found))
}

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let id = match urls::classify(&InputUrl::parse(&target.canonical_url)?)? {
        Link::Video(id) => id,
        Link::Short(code) => match resolve_short(&code, done)? {
            Followed::Arrived { post, .. } => post,
            Followed::Fetch(request) => return Ok(Step::one(request)),
        },
    };
    let mut misses = Vec::new();
    // A post whose page parsed but carried no stream (app-only videos).
    let mut no_stream: Option<Found> = None;

    // Strategy 1: ttwid, then the desktop page's RENDER_DATA.
    let cookie = match ctx.config("cookie").filter(|c| c.contains("ttwid=")) {
        Some(operator) => Some(operator.to_string()),
        None => match last(done, REGISTER_URL) {
            None => {
                let request = HttpRequest::post(REGISTER_URL, REGISTER_BODY)
                    .header("Content-Type", "application/json")
                    .header("User-Agent", ua::CHROME_130_WINDOWS)
                    .cache_for(TTWID_CACHE_SECONDS);
                return Ok(Step::one(request));
            }
            Some(response) => cookie_value(response, "ttwid").map(|v| format!("ttwid={v}")),
        },
    };
    if let Some(cookie) = cookie {
        let url = desktop_url(&id);
        let Some(response) = last(done, &url) else {
            let request = HttpRequest::get(url)
                .header("User-Agent", ua::CHROME_130_WINDOWS)
                .header("Referer", "https://www.toutiao.com/")
                .header("Cookie", cookie);
            return Ok(Step::one(request));
        };
        match map::read_desktop(&id, response) {
            Ok(f) if !f.videos.is_empty() => return Ok(found(f)),
            Ok(f) => no_stream = Some(f),
            Err(miss) => misses.push(miss),
        }
    }

    // Strategy 2: the mobile page, and VOD GetPlayInfo when it holds a token.
    let url = mobile_url(&id);
    let Some(response) = last(done, &url) else {
        return Ok(mobile_get(url));
    };
    match map::read_mobile(&id, response) {
        Ok(Mobile::Found(f)) if !f.videos.is_empty() => return Ok(found(f)),
        Ok(Mobile::Found(f)) => {
            no_stream.get_or_insert(f);
        }
        Ok(Mobile::AppOnly) => {
            if let Some(f) = no_stream {
                return Ok(found(f));
            }
        }
        Ok(Mobile::Vod { found: f, query }) => {
            let url = format!("https://vod.bytedanceapi.com/?{query}");
            let Some(response) = last(done, &url) else {
                return Ok(mobile_get(url));
            };
            match map::read_vod(f, response) {
                Ok(f) if !f.videos.is_empty() => return Ok(found(f)),
                Ok(f) => {
                    no_stream.get_or_insert(f);
                }
                Err(miss) => misses.push(miss),
            }
        }
        Err(miss) => misses.push(miss),
    }

    // Strategy 3: the legacy info answer (string `video_play_info`).
    let url = legacy_url(&id);
    let Some(response) = last(done, &url) else {
        return Ok(mobile_get(url));
    };
    match map::read_legacy(&id, response) {
        Ok(f) if !f.videos.is_empty() => return Ok(found(f)),
        Ok(f) => {
            no_stream.get_or_insert(f);
        }
        Err(miss) => misses.push(miss),
    }
    // A post that parsed without any stream is a no-media answer (304).
    match no_stream {
        Some(f) => Ok(found(f)),
        None => Err(map::verdict(misses)),
    }
}

/// Follow an `/is/` share link to the video id it names.
fn resolve_short<'d>(code: &str, done: &'d [Exchange]) -> Result<Followed<'d, String>> {
    SHARE_LINKS.follow(
        &urls::short_url(code),
        done,
        |url, _| {
            HttpRequest::get(url)
                .header("User-Agent", ua::SAFARI_17_IPHONE)
                .no_redirects()
        },
        |landing| match urls::classify(landing) {
            Ok(Link::Video(id)) => Landing::Arrived(id),
            Ok(Link::Short(next)) => Landing::Hop(urls::short_url(&next)),
            Err(_) => Landing::Elsewhere,
        },
    )
}
