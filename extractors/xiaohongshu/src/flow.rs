//! The requests, re-derived from the exchanges on every call: short-link
//! hops, the note page with a desktop UA, then (when it carries no state at
//! all) the same page with a mobile UA.

use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Failure, HttpRequest, HttpResponse, Result, Step, Target, ua,
};

use crate::map::{self, DESKTOP_UA};
use crate::page::{self, Screen};
use crate::urls::{self, Link, NoteRef};

/// A phone browser, for the mobile page fallback and for short links.
pub const MOBILE_UA: &str = ua::SAFARI_17_IPHONE;

const SHORT_LINKS: ShortLinks = ShortLinks {
    link: "the short link",
    post: "a note",
    max_hops: 4,
    hosts: &urls::SHORT_HOSTS,
};

/// The flow: the next request, or the note mapped.
pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let note = match resolve(target, done)? {
        Ok(note) => note,
        Err(hop) => return Ok(Step::one(hop)),
    };
    let Some(desktop) = page_exchange(done, &note, DESKTOP_UA) else {
        return Ok(Step::one(page_request(&note, DESKTOP_UA, ctx)));
    };
    let with_cookie = ctx.config("cookie").is_some();
    let page = if page::screen(&desktop.response, &note, with_cookie)? == Screen::State {
        desktop
    } else {
        let Some(mobile) = page_exchange(done, &note, MOBILE_UA) else {
            return Ok(Step::one(page_request(&note, MOBILE_UA, ctx)));
        };
        match page::screen(&mobile.response, &note, with_cookie)? {
            Screen::State => mobile,
            Screen::NoState => {
                return Err(Failure::changed(
                    "the note page carries no known state, desktop or mobile",
                ));
            }
        }
    };
    let text = page.response.text();
    let found = page::find_note(&text, &note.id)?
        .ok_or_else(|| page::withheld(&note, with_cookie && !page::signed_out(&text)))?;
    map::extract(&found).map(Step::Done)
}

/// The note the target names (`Ok`), directly or through its short link's
/// recorded hops, or the next hop to request (`Err`).
fn resolve(target: &Target, done: &[Exchange]) -> Result<Result<NoteRef, HttpRequest>> {
    let url = match urls::parse_url(&target.canonical_url)? {
        Link::Note(note) => return Ok(Ok(note)),
        Link::Short { url, .. } => url,
    };
    let request = |url: &str, _: &[&Exchange]| {
        HttpRequest::get(url)
            .header("User-Agent", MOBILE_UA)
            .no_redirects()
    };
    let land = |u: &InputUrl| match urls::parse_url(u.url.as_str()) {
        Ok(Link::Note(note)) => Landing::Arrived(note),
        Ok(Link::Short { url, .. }) => Landing::Hop(url),
        // Expired, or a profile or the home page.
        Err(_) => Landing::Elsewhere,
    };
    Ok(
        match SHORT_LINKS.follow_judging(&url, done, request, land, no_redirect)? {
            Followed::Fetch(hop) => Err(hop),
            Followed::Arrived { post, .. } => Ok(post),
        },
    )
}

/// A hop that did not redirect: the host's rate-limit statuses (429, 461,
/// 471), else an expired link.
fn no_redirect(response: &HttpResponse) -> Failure {
    match response.status {
        429 | 461 | 471 => Failure::RateLimited("the short-link host is rate-limiting".into()),
        _ => Failure::unsupported("the short link is expired or invalid"),
    }
}

/// The note page request, with the operator's session cookie when set.
fn page_request(note: &NoteRef, user_agent: &str, ctx: &Context) -> HttpRequest {
    let mut request = HttpRequest::get(note.page_url())
        .header("User-Agent", user_agent)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header("Accept-Language", "zh-CN,zh;q=0.9,en;q=0.8")
        .header("Referer", "https://www.xiaohongshu.com/explore")
        .no_redirects();
    if let Some(cookie) = ctx.config("cookie") {
        request = request.header("Cookie", cookie.trim());
    }
    request
}

/// The page fetched for `note` with this User-Agent, if any.
fn page_exchange<'a>(
    done: &'a [Exchange],
    note: &NoteRef,
    user_agent: &str,
) -> Option<&'a Exchange> {
    let url = note.page_url();
    done.last_where(|e| {
        e.request.url == url && e.request.header_value("User-Agent") == Some(user_agent)
    })
}
