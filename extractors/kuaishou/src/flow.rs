//! The rounds, re-derived from `done` on every call: share-token hops
//! (carrying the cookies they set), then the mobile share page, then the
//! desktop page.

use mediaparse_sdk::cascade::{Attempt, Cascade};
use mediaparse_sdk::cookies::{jar, join};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::RawValue;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::{Exchange, HttpRequest, HttpResponse, Result, Step, Target, ua};

use crate::map;
use crate::urls::{self, Link};

/// Share tokens (`v.kuaishou.com/{token}`, `/f/{token}`) and their hops.
const SHARE_LINKS: ShortLinks = ShortLinks {
    link: "the share link",
    post: "a Kuaishou post",
    max_hops: 4,
    hosts: &[
        "v.kuaishou.com",
        "www.kuaishou.com",
        "*.m.chenzhongtech.com",
        "m.gifshow.com",
    ],
};

fn last<'a>(done: &'a [Exchange], url: &str) -> Option<&'a HttpResponse> {
    done.last_at(url).map(|e| &e.response)
}

/// The `Cookie` value the hops so far set (a later value of a name wins).
fn hop_cookies(hops: &[&Exchange]) -> String {
    join(&jar(hops.iter().map(|e| &e.response)))
}

pub fn step(target: &Target, done: &[Exchange]) -> Result<Step> {
    let (id, page, cookie) = match urls::link_of(target)? {
        Link::Photo { id, page } => (id, page, String::new()),
        Link::Short { url, .. } => match resolve_short(&url, done)? {
            Followed::Arrived {
                post: (id, page),
                hops,
            } => (id, page, hop_cookies(&hops)),
            Followed::Fetch(request) => return Ok(Step::one(request)),
        },
    };
    Cascade::new()
        // Strategy 1: the mobile share page's INIT_STATE.
        .attempt(|| {
            let mobile = page.unwrap_or_else(|| urls::mobile_page(&id));
            let Some(response) = last(done, &mobile) else {
                let mut request = HttpRequest::get(&mobile)
                    .header("User-Agent", ua::SAFARI_17_IPHONE)
                    .header("Referer", "https://v.m.chenzhongtech.com/");
                if !cookie.is_empty() {
                    request = request.header("Cookie", cookie);
                }
                return Ok(Attempt::Got(Step::one(request)));
            };
            found(map::read_mobile(response)?, &id)
        })
        // Strategy 2: the desktop page's Apollo cache.
        .attempt(|| {
            let desktop = urls::canonical_photo(&id);
            let Some(response) = last(done, &desktop) else {
                let request =
                    HttpRequest::get(&desktop).header("User-Agent", ua::CHROME_130_WINDOWS);
                return Ok(Attempt::Got(Step::one(request)));
            };
            found(map::read_desktop(response, &id)?, &id)
        })
        .finish()
}

fn found(attempt: Attempt<Box<RawValue>>, id: &str) -> Result<Attempt<Step>> {
    Ok(match attempt {
        Attempt::Got(photo) => Attempt::Got(Step::Done(map::extraction(&photo, id)?)),
        Attempt::Missed(miss) => Attempt::Missed(miss),
    })
}

/// Follow a share token hop by hop until a photo id (and maybe the share
/// page a redirect named) appears; each hop carries the cookies set so far.
fn resolve_short<'d>(
    start: &str,
    done: &'d [Exchange],
) -> Result<Followed<'d, (String, Option<String>)>> {
    SHARE_LINKS.follow(
        start,
        done,
        |url, hops| {
            let request = HttpRequest::get(url)
                .header("User-Agent", ua::SAFARI_17_IPHONE)
                .header("Referer", "https://v.kuaishou.com/")
                .no_redirects();
            match hop_cookies(hops) {
                cookie if cookie.is_empty() => request,
                cookie => request.header("Cookie", cookie),
            }
        },
        |landing| match urls::classify(landing) {
            Ok(Link::Photo { id, page }) => Landing::Arrived((id, page)),
            Ok(Link::Short { url, .. }) => Landing::Hop(url),
            Err(_) => Landing::Elsewhere,
        },
    )
}
