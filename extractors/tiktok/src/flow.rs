//! The rounds, re-derived from `done` on every call: [short-link hops] →
//! post page → [page again after a challenge, a same-post redirect, or
//! once more when the page came without data] → [strategy B, the app API,
//! when the operator configured an `iid` and the page failed with an
//! anti-bot, network-block or layout signal].

use mediaparse_sdk::cascade::{Attempt, Cascade};
use mediaparse_sdk::cookies;
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::links::{Followed, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Failure, HttpRequest, HttpResponse, Result, Step, Target, ua,
};

use crate::urls::{Link, Post, classify, landing};
use crate::{app, challenge, map, page};

const ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const ACCEPT_LANGUAGE: &str = "en-US,en;q=0.9";

/// Short links (`vm.`/`vt.tiktok.com/{code}`, `/t/{code}`): redirect hops a
/// short link may take before it must name a post.
const SHORT_LINKS: ShortLinks = ShortLinks {
    link: "the short link",
    post: "a TikTok post",
    max_hops: 4,
    hosts: &["vt.tiktok.com", "www.tiktok.com"],
};
/// Page requests per parse: first try, challenge answer, one retry, one redirect.
const MAX_PAGE_REQUESTS: usize = 4;

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let post = match resolve(target, done)? {
        Followed::Arrived { post, .. } => post,
        Followed::Fetch(request) => return Ok(Step::one(request)),
    };
    let app = app::AppInfo::from_config(ctx);
    // Strategy A: the post page; strategy B only on the failure signals the
    // app API can get past.
    let page = page_step(&post, ctx, done).map(|page| match page {
        PageStep::Fetch(request) => Step::one(request),
        PageStep::Ready(extraction) => Step::Done(extraction),
    });
    let mut cascade =
        Cascade::new().attempt(|| Attempt::moving_on(page, |f| app.is_some() && falls_back(f)));
    if let Some(info) = &app {
        cascade = cascade.attempt(|| app_api(info, &post.id, ctx, done));
    }
    cascade.finish_last()
}

/// Strategy B: the app API's detail call, or the post in its answer.
fn app_api(
    info: &app::AppInfo,
    id: &str,
    ctx: &Context,
    done: &[Exchange],
) -> Result<Attempt<Step>> {
    let Some(exchange) = done.last_where(app::is_app) else {
        return Ok(Attempt::Got(Step::one(info.request(id, ctx.now_unix_ms))));
    };
    let aweme = app::aweme(&exchange.response, id)?;
    Ok(Attempt::Got(Step::Done(Extraction {
        media: app::media(&aweme)?,
        platform_data: app::platform_data(&aweme).into(),
    })))
}

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

/// The post a target names, following a short link's recorded hops; the
/// next hop to fetch when the chain is not complete yet.
fn resolve<'d>(target: &Target, done: &'d [Exchange]) -> Result<Followed<'d, Post>> {
    let url = InputUrl::parse(&target.canonical_url)?;
    let start = match classify(&url) {
        Some(Link::Post(post)) => {
            return Ok(Followed::Arrived {
                post,
                hops: Vec::new(),
            });
        }
        Some(Link::Short(short)) => short.fetch_url,
        None => return Err(Failure::unsupported("not a single TikTok post")),
    };
    SHORT_LINKS.follow_judging(
        &start,
        done,
        |url, _| {
            HttpRequest::get(url)
                .no_redirects()
                .header("User-Agent", ua::CHROME_139_WINDOWS)
        },
        landing,
        dead_end,
    )
}

/// A short-link hop that answered without a redirect.
fn dead_end(response: &HttpResponse) -> Failure {
    match response.status {
        404 | 410 => Failure::unavailable("the short link does not exist (HTTP 404)"),
        403 | 429 => Failure::RateLimited(format!(
            "TikTok refused the short link (HTTP {})",
            response.status
        )),
        status => Failure::changed(format!(
            "the short link answered HTTP {status} without a redirect"
        )),
    }
}

/// Is this exchange a request for a post page (not a short-link hop)?
pub fn is_page(exchange: &Exchange) -> bool {
    InputUrl::parse(&exchange.request.url)
        .ok()
        .is_some_and(|u| {
            u.host == "www.tiktok.com" && !matches!(classify(&u), Some(Link::Short(_)))
        })
}

/// Where the post-page conversation stands.
enum PageStep {
    Fetch(HttpRequest),
    Ready(Extraction),
}

/// Where the post-page conversation stands: the next page request, the
/// post's `itemStruct` mapped, or the error the answers amount to (guide §6).
fn page_step(post: &Post, ctx: &Context, done: &[Exchange]) -> Result<PageStep> {
    let pages: Vec<&Exchange> = done.iter().filter(|e| is_page(e)).collect();
    let Some((last, earlier)) = pages.split_last() else {
        return Ok(PageStep::Fetch(page_request(&post.page_url(), &[])));
    };
    let received = received_cookies(&pages);
    let exhausted = pages.len() >= MAX_PAGE_REQUESTS;
    let busted = pages.iter().any(|e| has_junk_headers(&e.request));
    // A 403 for the page is often TikTok refusing our header fingerprint:
    // ask once more with a few meaningless extra headers.
    if last.response.status == 403 && !busted && !exhausted {
        let junk = junk_headers(&post.id, ctx.now_unix_ms);
        return Ok(PageStep::Fetch(with_headers(
            page_request(&last.request.url, &received),
            junk,
        )));
    }
    let html = last.response.text();
    match page::analyze(&last.response, &html, &post.id)? {
        page::Page::Item(item) => Ok(PageStep::Ready(map::extraction(&item, done)?)),
        page::Page::Challenge => {
            if earlier.iter().any(|e| is_challenge_answer(e)) || exhausted {
                return Err(Failure::RateLimited(
                    "TikTok served its anti-bot challenge again after it was solved".into(),
                ));
            }
            let mut cookies = challenge::solve(&html)?;
            cookies.extend(received);
            Ok(PageStep::Fetch(page_request(&last.request.url, &cookies)))
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
            let junk = junk_headers(&post.id, ctx.now_unix_ms);
            Ok(PageStep::Fetch(with_headers(
                page_request(&url, &received),
                junk,
            )))
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
                return Ok(PageStep::Fetch(page_request(&location, &received)));
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
        .header("User-Agent", ua::CHROME_139_WINDOWS)
        .header("Accept", ACCEPT)
        .header("Accept-Language", ACCEPT_LANGUAGE);
    if !cookies.is_empty() {
        request = request.header("Cookie", cookies::join(cookies));
    }
    request
}

/// Every cookie the page answers set, a later value replacing an earlier one.
/// Letters of the meaningless header names and values: no vowels, so no
/// real header name can come out.
const JUNK_LETTERS: &[u8] = b"bcdfghjklmnpqrstvwxz";

/// Two to eight headers with meaningless names (8–24 letters) and values
/// (16–32 letters), derived from the post id and the clock, that make our
/// request's header fingerprint unlike any earlier one.
pub fn junk_headers(id: &str, now_unix_ms: u64) -> Vec<(String, String)> {
    let seed = id
        .bytes()
        .chain(now_unix_ms.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let mut rng = SplitMix(seed);
    let count = 2 + rng.below(7);
    (0..count)
        .map(|_| (rng.word(8, 24), rng.word(16, 32)))
        .collect()
}

/// splitmix64: a small deterministic generator.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }

    fn word(&mut self, min: u64, max: u64) -> String {
        let len = min + self.below(max - min + 1);
        (0..len)
            .map(|_| char::from(JUNK_LETTERS[self.below(JUNK_LETTERS.len() as u64) as usize]))
            .collect()
    }
}

/// Does a request carry junk headers (a name of 8+ letters, all of them
/// from `JUNK_LETTERS`)?
fn has_junk_headers(request: &HttpRequest) -> bool {
    request
        .headers
        .iter()
        .any(|h| h.name.len() >= 8 && h.name.bytes().all(|b| JUNK_LETTERS.contains(&b)))
}

fn with_headers(mut request: HttpRequest, headers: Vec<(String, String)>) -> HttpRequest {
    for (name, value) in headers {
        request = request.header(name, value);
    }
    request
}

pub fn received_cookies(pages: &[&Exchange]) -> Vec<(String, String)> {
    cookies::jar(pages.iter().map(|e| &e.response))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_headers_are_meaningless_and_vary() {
        let a = junk_headers("7645865439725112598", 1_755_500_000_000);
        assert!((2..=8).contains(&a.len()));
        for (name, value) in &a {
            assert!((8..=24).contains(&name.len()) && (16..=32).contains(&value.len()));
            assert!(
                name.bytes()
                    .chain(value.bytes())
                    .all(|b| JUNK_LETTERS.contains(&b))
            );
        }
        assert_eq!(a, junk_headers("7645865439725112598", 1_755_500_000_000));
        assert_ne!(a, junk_headers("7645865439725112598", 1_755_500_000_001));
        let request = with_headers(page_request("https://www.tiktok.com/@a/video/1", &[]), a);
        assert!(has_junk_headers(&request));
        assert!(!has_junk_headers(&page_request(
            "https://www.tiktok.com/@a/video/1",
            &[]
        )));
    }
}
