//! The requests, re-derived from the exchanges on every call: short-link
//! hops, then per kind of post the metadata call and the play-URL cascade
//! (videos: WBI-signed playurl, the video page, the html5 playurl; bangumi:
//! pgc v2, then the old pgc playurl; courses: pugv).

use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::fields::RawValue;
use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::serde_json::{self, Map, Value};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Failure, HttpRequest, HttpResponse, Result, Step, Target,
};
use serde::Deserialize;

use crate::api::{self, Outcome, PlayUrl, answers, id_string};
use crate::map;
use crate::meta::{
    Episode, Meta, ViewData, ViewExtras, cheese_meta, episodes, pgc_meta, video_meta,
};
use crate::urls::{self, Kind, Pgc, classify, detect_input};
use crate::wbi::Keys;

/// Short links that point at other short links are followed this many times.
const MAX_SHORT_HOPS: usize = 3;

const SHORT_LINKS: ShortLinks = ShortLinks {
    link: "the short link",
    post: "a single video",
    // More than ours, so that too long a chain is our upstream error.
    max_hops: MAX_SHORT_HOPS + 2,
    hosts: &urls::SHORT_HOSTS,
};

/// The finished extraction of a play-URL object.
fn ready(play: Box<PlayUrl>, meta: Meta) -> Result<Step> {
    let view = map::View::of(&play.object);
    let media = map::build(&view, play.dash.as_ref(), &meta)?;
    let platform_data = map::platform_data(&play, &view, meta)?;
    Ok(Step::Done(Extraction {
        media,
        platform_data,
    }))
}

fn fetch(requests: Vec<HttpRequest>) -> Result<Step> {
    Ok(Step::Fetch(requests))
}

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let url = if target.canonical_url.is_empty() {
        target.input.as_str()
    } else {
        target.canonical_url.as_str()
    };
    let kind = match detect_input(url)? {
        Kind::Short { url, .. } => match follow_short(&url, done)? {
            Ok(kind) => kind,
            Err(hop) => return fetch(vec![hop]),
        },
        kind => kind,
    };
    match kind {
        Kind::Video { bvid, page } => video(&bvid, page, ctx, done),
        Kind::Bangumi(which) => bangumi(which, ctx, done),
        Kind::Cheese(which) => cheese(which, ctx, done),
        Kind::Short { .. } => Err(Failure::upstream("the short link led to a short link")),
    }
}

/// Where a short link leads (`Ok`), or its next hop to request (`Err`).
/// Bilibili's own readings: a gone code is unavailable, 412 is risk
/// control, a page instead of a redirect an upstream error, and too long a
/// chain an upstream error.
fn follow_short(start: &str, done: &[Exchange]) -> Result<Result<Kind, HttpRequest>> {
    let request = |url: &str, _: &[&Exchange]| {
        HttpRequest::get(url)
            .no_redirects()
            .header("User-Agent", api::USER_AGENT)
    };
    match SHORT_LINKS.follow_judging(start, done, request, land, no_redirect)? {
        Followed::Arrived { post, .. } => Ok(Ok(post)),
        Followed::Fetch(_) if hops(done) > MAX_SHORT_HOPS => Err(Failure::upstream(
            "the short link redirects through too many short links",
        )),
        Followed::Fetch(hop) => Ok(Err(hop)),
    }
}

fn hops(done: &[Exchange]) -> usize {
    done.iter().filter(|e| !e.request.follow_redirects).count()
}

/// A short-link hop that did not redirect.
fn no_redirect(response: &HttpResponse) -> Failure {
    match response.status {
        _ if response.is_redirect() => Failure::changed("short link redirect without a Location"),
        404 | 410 => Failure::unavailable("the short link does not exist"),
        412 | 429 => Failure::RateLimited(format!("short link answered HTTP {}", response.status)),
        status => Failure::upstream(format!(
            "short link answered HTTP {status} without a redirect"
        )),
    }
}

/// A short link's redirect target; home pages, profiles and the like are errors.
fn land(url: &InputUrl) -> Landing<Kind> {
    if url.host_in(&urls::SITE_HOSTS) && url.segments.is_empty() {
        return Landing::Failed(Failure::unavailable(
            "the short link is invalid or expired (it leads to the home page)",
        ));
    }
    match classify(url) {
        Ok(Kind::Short { url, .. }) => Landing::Hop(url),
        Ok(kind) => Landing::Arrived(kind),
        Err(Failure::UnsupportedUrl(why)) => Landing::Failed(Failure::UnsupportedUrl(format!(
            "the short link leads to {}, not a single video: {why}",
            url.url
        ))),
        Err(other) => Landing::Failed(other),
    }
}

/// An API answer's `data`/`result` object, or the failure its code means.
fn api_object(exchange: &Exchange, what: &str, ctx: &Context) -> Result<Map<String, Value>> {
    let raw = api_object_text(exchange, what, ctx)?;
    api::object_of(Some(raw)).ok_or_else(|| Failure::changed(format!("{what}: no data object")))
}

/// An API answer's `data`/`result` object as its JSON text (checked to be
/// an object), or the failure its code means.
fn api_object_text<'a>(exchange: &'a Exchange, what: &str, ctx: &Context) -> Result<&'a RawValue> {
    let env: api::Envelope = api::envelope(exchange, what).map_err(outcome_failure)?;
    if env.code != 0 {
        let message = format!("{what}: code {} {}", env.code, env.message);
        if api::is_risk_code(env.code) {
            return Err(Failure::RateLimited(message));
        }
        if env.code == -101 && ctx.config("cookie").is_none() {
            return Err(Failure::LoginRequired(message));
        }
        if let Some(reason) = api::unavailable_reason(env.code) {
            return Err(Failure::unavailable(format!("{reason} ({message})")));
        }
        return Err(Failure::upstream(message));
    }
    match env.data.or(env.result) {
        Some(raw) if raw.get().trim_start().starts_with('{') => Ok(raw),
        _ => Err(Failure::changed(format!("{what}: no data object"))),
    }
}

fn outcome_failure(outcome: Outcome) -> Failure {
    match outcome {
        Outcome::Fatal(f) => f,
        Outcome::Retry {
            risk: true,
            message,
        } => Failure::RateLimited(message),
        Outcome::Retry { message, .. } => Failure::upstream(message),
        Outcome::Streams(_) => Failure::upstream("unexpected streams"),
    }
}

fn judge_api<'a>(exchange: &'a Exchange, what: &str, ctx: &Context) -> Outcome<'a> {
    match api::envelope::<api::PlayEnvelope>(exchange, what) {
        Ok(env) => api::judge_playurl(env, what, ctx),
        Err(outcome) => outcome,
    }
}

/// Failures of the strategies tried so far.
#[derive(Default)]
struct Misses {
    risk: bool,
    notes: Vec<String>,
}

impl Misses {
    fn add(&mut self, risk: bool, message: String) {
        self.risk |= risk;
        self.notes.push(message);
    }

    fn into_failure(self) -> Failure {
        let message = self.notes.join("; ");
        if self.risk {
            Failure::RateLimited(message)
        } else {
            Failure::upstream(message)
        }
    }
}

/// The episode id of a `redirect_url` to a bangumi episode page.
fn bangumi_redirect(redirect_url: &str) -> Option<u64> {
    let url = InputUrl::parse(redirect_url).ok()?;
    match classify(&url).ok()? {
        Kind::Bangumi(Pgc::Episode(ep)) => Some(ep),
        _ => None,
    }
}

fn video(bvid: &str, page: u32, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let view_request = api::view_request(bvid);
    let Some(view_exchange) = done.last_at(&view_request.url) else {
        return fetch(vec![view_request, api::nav_request(api::NAV_CACHE_SECONDS)]);
    };
    let raw = api_object_text(view_exchange, "view", ctx)?;
    let view: ViewData = serde_json::from_str(raw.get())
        .map_err(|e| Failure::changed(format!("view: unexpected data ({e})")))?;
    let kept: ViewExtras = serde_json::from_str(raw.get())
        .map_err(|e| Failure::changed(format!("view: unexpected data ({e})")))?;
    if let Some(ep) = view.redirect_url.as_deref().and_then(bangumi_redirect) {
        return bangumi(Pgc::Episode(ep), ctx, done);
    }
    if view.is_upower_exclusive == Some(true) && ctx.config("cookie").is_none() {
        return Err(Failure::unavailable(
            "charge-only video (is_upower_exclusive): guests get a preview only",
        ));
    }
    let pages = view.pages.as_deref().unwrap_or_default();
    let part = match pages.iter().find(|p| p.page == Some(page)) {
        Some(part) => Some(part),
        None if page == 1 => pages.first(),
        None => {
            return Err(Failure::unavailable(format!(
                "the video has no part {page} (it has {})",
                pages.len().max(1)
            )));
        }
    };
    let cid = part
        .and_then(|p| id_string(p.cid.as_ref()))
        .or_else(|| id_string(view.cid.as_ref()))
        .ok_or_else(|| Failure::changed("view: no cid"))?;
    let aid = id_string(view.aid.as_ref()).ok_or_else(|| Failure::changed("view: no aid"))?;
    let meta = video_meta(&view, &kept, part, pages.len(), page, &aid, &cid);

    let mut misses = Misses::default();
    // Primary: the WBI-signed playurl, keys from `nav`.
    let signed = answers(done, api::WBI_PLAYURL);
    let navs = answers(done, api::NAV);
    let keys = |exchange: Option<&&Exchange>| exchange.and_then(|e| nav_keys(e));
    match signed.last() {
        None => match keys(navs.last()) {
            Some(keys) => {
                return fetch(vec![api::wbi_playurl_request(bvid, &cid, &keys, ctx)]);
            }
            None => misses.add(false, "nav: no WBI keys".into()),
        },
        Some(exchange) => match judge_api(exchange, "wbi playurl", ctx) {
            Outcome::Streams(object) => return ready(object, meta),
            Outcome::Fatal(failure) => return Err(failure),
            Outcome::Retry { risk, message } => {
                misses.add(risk, message);
                // Risk control can mean stale cached keys: fetch `nav` afresh
                // (and the page fallback meanwhile), retry once if they changed.
                if risk && signed.len() == 1 {
                    if navs.len() == 1 {
                        return fetch(vec![
                            api::nav_request(0),
                            api::page_request(bvid, page, ctx),
                        ]);
                    }
                    let (first, fresh) = (keys(navs.first()), keys(navs.last()));
                    if let Some(fresh) = fresh.filter(|k| Some(k) != first.as_ref()) {
                        return fetch(vec![api::wbi_playurl_request(bvid, &cid, &fresh, ctx)]);
                    }
                }
            }
        },
    }
    // Fallback a: the video page's `window.__playinfo__`.
    let page_request = api::page_request(bvid, page, ctx);
    match done.last_at(&page_request.url) {
        None => return fetch(vec![page_request]),
        Some(exchange) => {
            let html = exchange.response.text();
            match api::judge_page(exchange, &html, ctx) {
                Outcome::Streams(object) => return ready(object, meta),
                Outcome::Fatal(failure) => return Err(failure),
                Outcome::Retry { risk, message } => misses.add(risk, message),
            }
        }
    }
    // Fallback b: the legacy unsigned playurl, `platform=html5` MP4.
    let html5 = api::html5_playurl_request(&aid, bvid, &cid, ctx);
    match done.last_at(&html5.url) {
        None => fetch(vec![html5]),
        Some(exchange) => match judge_api(exchange, "html5 playurl", ctx) {
            Outcome::Streams(object) => ready(object, meta),
            Outcome::Fatal(failure) => Err(failure),
            Outcome::Retry { risk, message } => {
                misses.add(risk, message);
                Err(misses.into_failure())
            }
        },
    }
}

/// WBI keys from a `nav` answer (logged out it says -101 and still has them).
fn nav_keys(exchange: &Exchange) -> Option<Keys> {
    #[derive(Deserialize)]
    struct Nav {
        data: Option<NavData>,
    }
    #[derive(Deserialize)]
    struct NavData {
        wbi_img: Option<WbiImg>,
    }
    #[derive(Deserialize)]
    struct WbiImg {
        img_url: String,
        sub_url: String,
    }
    if !exchange.response.is_success() {
        return None;
    }
    let img = exchange.response.json::<Nav>().ok()?.data?.wbi_img?;
    Keys::from_urls(&img.img_url, &img.sub_url)
}

// ---------------------------------------------------------------- bangumi

fn bangumi(which: Pgc, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let (ep, from_section) = match which {
        Pgc::Episode(ep) => (ep, None),
        Pgc::Season(season) => {
            let request = api::pgc_section_request(season);
            let Some(exchange) = done.last_at(&request.url) else {
                return fetch(vec![request]);
            };
            let result = api_object(exchange, "season sections", ctx)?;
            let mut list = episodes(result.get("main_section").and_then(|m| m.get("episodes")))?;
            if list.is_empty() {
                for section in result
                    .get("section")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    list.extend(episodes(section.get("episodes"))?);
                }
            }
            let first = list
                .into_iter()
                .next()
                .ok_or_else(|| Failure::unavailable("the season has no episodes"))?;
            let ep = id_string(first.id.as_ref())
                .and_then(|id| id.parse::<u64>().ok())
                .ok_or_else(|| Failure::changed("season sections: episode without id"))?;
            (ep, Some(first))
        }
    };
    let season_request = api::pgc_season_request(ep);
    let v2_request = api::pgc_playurl_v2_request(ep, ctx);
    let missing: Vec<HttpRequest> = [season_request.clone(), v2_request.clone()]
        .into_iter()
        .filter(|r| done.last_at(&r.url).is_none())
        .collect();
    if !missing.is_empty() {
        return fetch(missing);
    }
    let mut misses = Misses::default();
    // Episode info is for the title and cover; streams do not depend on it.
    let season = match done
        .last_at(&season_request.url)
        .map(|e| api_object(e, "season", ctx))
    {
        Some(Ok(season)) => Some(season),
        Some(Err(failure @ Failure::Unavailable(_))) => return Err(failure),
        Some(Err(failure)) => {
            misses.add(
                matches!(failure, Failure::RateLimited(_)),
                failure.to_string(),
            );
            None
        }
        None => None,
    };
    let episode = match &season {
        Some(s) => episodes(s.get("episodes"))?.into_iter().find(|e| e.is(ep)),
        None => None,
    }
    .or(from_section);
    let meta = pgc_meta(season.as_ref(), episode.as_ref(), ep);

    if let Some(exchange) = done.last_at(&v2_request.url) {
        match judge_api(exchange, "pgc playurl", ctx) {
            Outcome::Streams(object) => return ready(object, meta),
            Outcome::Fatal(failure) => return Err(failure),
            Outcome::Retry { risk, message } => misses.add(risk, message),
        }
    }
    let cid = episode.as_ref().and_then(|e| id_string(e.cid.as_ref()));
    let old_request = api::pgc_playurl_old_request(ep, cid.as_deref(), ctx);
    match done.last_at(&old_request.url) {
        None => fetch(vec![old_request]),
        Some(exchange) => match judge_api(exchange, "pgc playurl (old)", ctx) {
            Outcome::Streams(object) => ready(object, meta),
            Outcome::Fatal(failure) => Err(failure),
            Outcome::Retry { risk, message } => {
                misses.add(risk, message);
                Err(misses.into_failure())
            }
        },
    }
}

// ---------------------------------------------------------------- courses

fn cheese(which: Pgc, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let request = match which {
        Pgc::Episode(ep) => api::pugv_season_request("ep_id", ep),
        Pgc::Season(season) => api::pugv_season_request("season_id", season),
    };
    let Some(exchange) = done.last_at(&request.url) else {
        return fetch(vec![request]);
    };
    let season = api_object(exchange, "course season", ctx)?;
    let list = episodes(season.get("episodes"))?;
    let can_view = |e: &Episode| e.playable == Some(true) || e.episode_can_view == Some(true);
    let episode = match which {
        Pgc::Episode(ep) => list
            .iter()
            .find(|e| e.is(ep))
            .ok_or_else(|| Failure::unavailable(format!("the course has no episode {ep}")))?,
        Pgc::Season(_) => list
            .iter()
            .find(|e| can_view(e))
            .or(list.first())
            .ok_or_else(|| Failure::unavailable("the course has no episodes"))?,
    };
    let locked = episode.playable == Some(false) && episode.episode_can_view != Some(true);
    if locked && ctx.config("cookie").is_none() {
        return Err(Failure::unavailable(
            "this course episode must be purchased (not playable for guests)",
        ));
    }
    let missing = || Failure::changed("course season: episode without id/aid/cid");
    let ep = id_string(episode.id.as_ref()).ok_or_else(missing)?;
    let aid = id_string(episode.aid.as_ref()).ok_or_else(missing)?;
    let cid = id_string(episode.cid.as_ref()).ok_or_else(missing)?;
    let meta = cheese_meta(&season, episode, &ep, &aid, &cid);
    let play = api::pugv_playurl_request(&aid, &cid, &ep, ctx);
    let Some(exchange) = done.last_at(&play.url) else {
        return fetch(vec![play]);
    };
    match judge_api(exchange, "course playurl", ctx) {
        Outcome::Streams(object) => ready(object, meta),
        Outcome::Fatal(failure) => Err(failure),
        Outcome::Retry { risk, message } => {
            let mut misses = Misses::default();
            misses.add(risk, message);
            Err(misses.into_failure())
        }
    }
}
