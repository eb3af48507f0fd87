//! Xiaohongshu (RED / rednote): one note → its images, live photos, video
//! streams and (app data only) voice.
//!
//! Strategy (upstream/xiaohongshu.md): short links are resolved through
//! their redirect first; then the web note page
//! `www.xiaohongshu.com/explore/{id}?xsec_token=…` with a desktop UA and the
//! operator's `cookie` (needed for video streams), whose last
//! `window.__INITIAL_STATE__` holds the note. When that page carries no
//! state at all, the same page with a mobile UA (`noteData` layouts).

pub mod link;
pub mod note;
pub mod page;

use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, Info, Plan, Result, Target,
};

use link::{Link, NoteRef};
use note::DESKTOP_UA;
use page::Screen;

pub const PLATFORM: &str = "xiaohongshu";

/// A phone browser, for the mobile page fallback and for short links.
pub const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/// Short-link redirects followed before giving up.
const MAX_HOPS: usize = 4;

pub struct Xiaohongshu;

impl Extractor for Xiaohongshu {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec![
                "*.xiaohongshu.com".into(),
                "*.rednote.com".into(),
                "*.xhslink.com".into(),
                "*.xhslink.cn".into(),
            ],
            api_hosts: vec![
                "www.xiaohongshu.com".into(),
                "xhslink.com".into(),
                "xhslink.cn".into(),
            ],
            url_shapes: vec![
                "https://www.xiaohongshu.com/explore/{id}?xsec_token={token}".into(),
                "https://www.xiaohongshu.com/discovery/item/{id}?xsec_token={token}".into(),
                "https://www.rednote.com/explore/{id}".into(),
                "https://www.rednote.com/discovery/item/{id}".into(),
                "https://xhslink.com/{type}/{code}".into(),
                "https://xhslink.com/{code}".into(),
                "share text containing one of these URLs".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let (id, canonical_url) = match link::parse_input(input)? {
            Link::Note(note) => (note.id.clone(), note.page_url()),
            Link::Short { url, code } => (code, url),
        };
        Ok(Target {
            platform: PLATFORM.into(),
            id,
            canonical_url,
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        let note = match resolve(target, done)? {
            Step::Fetch(request) => return Ok(Plan::one(request)),
            Step::Note(note) => note,
        };
        let Some(desktop) = page_exchange(done, &note, DESKTOP_UA) else {
            return Ok(Plan::one(page_request(&note, DESKTOP_UA, ctx)));
        };
        if page::screen(&desktop.response, &note)? == Screen::State {
            return Ok(Plan::Ready);
        }
        match page_exchange(done, &note, MOBILE_UA) {
            None => Ok(Plan::one(page_request(&note, MOBILE_UA, ctx))),
            Some(mobile) => match page::screen(&mobile.response, &note)? {
                Screen::State => Ok(Plan::Ready),
                Screen::NoState => Err(Failure::changed(
                    "the note page carries no known state, desktop or mobile",
                )),
            },
        }
    }

    fn map(target: &Target, _ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        let Step::Note(note) = resolve(target, done)? else {
            return Err(Failure::changed("the short link was not resolved"));
        };
        let page = page_exchange(done, &note, MOBILE_UA)
            .or_else(|| page_exchange(done, &note, DESKTOP_UA))
            .ok_or_else(|| Failure::changed("the note page was not fetched"))?;
        if page::screen(&page.response, &note)? == Screen::NoState {
            return Err(Failure::changed("the note page carries no known state"));
        }
        let found = page::find_note(&page.response.text(), &note.id)?
            .ok_or_else(|| page::unavailable(&note))?;
        note::extract(found)
    }
}

/// Where resolving the target stands.
enum Step {
    /// The next short-link hop to request.
    Fetch(HttpRequest),
    Note(NoteRef),
}

/// Follow the target's short link through the recorded hops, or take the
/// note it names directly.
fn resolve(target: &Target, done: &[Exchange]) -> Result<Step> {
    let mut url = match link::parse_url(&target.canonical_url)? {
        Link::Note(note) => return Ok(Step::Note(note)),
        Link::Short { url, .. } => url,
    };
    for _ in 0..MAX_HOPS {
        let Some(hop) = done.iter().find(|e| e.request.url == url) else {
            return Ok(Step::Fetch(
                HttpRequest::get(url)
                    .header("User-Agent", MOBILE_UA)
                    .no_redirects(),
            ));
        };
        let expired = || Failure::unsupported("the short link is expired or invalid");
        let location = match hop.response.location() {
            Some(l) if hop.response.is_redirect() => l,
            _ if matches!(hop.response.status, 429 | 461 | 471) => {
                return Err(Failure::RateLimited(
                    "the short-link host is rate-limiting".into(),
                ));
            }
            _ => return Err(expired()),
        };
        match link::parse_url(&location) {
            Ok(Link::Note(note)) => return Ok(Step::Note(note)),
            Ok(Link::Short { url: next, .. }) => url = next,
            Err(_) => {
                return Err(Failure::unsupported(
                    "the short link does not lead to a note (expired, or it points at a \
                     profile or the home page)",
                ));
            }
        }
    }
    Err(Failure::unsupported(
        "the short link redirects too many times",
    ))
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

mediaparse_sdk::export_extractor!(Xiaohongshu);
