//! Bilibili (mainland site): ordinary videos through `x/web-interface/view`
//! and the WBI-signed `x/player/wbi/playurl` (DASH), with the video page's
//! `window.__playinfo__` and the legacy `platform=html5` MP4 as fallbacks;
//! bangumi through `pgc`, courses through `pugv`. See
//! `docs/platforms/bilibili.md` for what each fixture proves.

pub mod bvid;
mod detect;
mod media;
mod upstream;
mod wbi;

pub use detect::{Kind, Pgc, classify, detect_input};
pub use wbi::{Keys, signed_query};

use mediaparse_sdk::serde_json::{Map, Value};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, Info, Plan, Result, Target,
};
use serde::Deserialize;

use media::{Meta, https};
use upstream::{Outcome, answer, answers, id_string};

pub struct Bilibili;

pub const PLATFORM: &str = "bilibili";

/// Short links that point at other short links are followed this many times.
const MAX_SHORT_HOPS: usize = 3;

impl Extractor for Bilibili {
    fn info() -> Info {
        let mut url_hosts = vec!["*.bilibili.com".to_string()];
        url_hosts.extend(detect::SHORT_HOSTS.iter().map(|h| h.to_string()));
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts,
            api_hosts: [
                "api.bilibili.com",
                "www.bilibili.com",
                "b23.tv",
                "bili2233.cn",
                "bili22.cn",
                "bili23.cn",
                "bili33.cn",
            ]
            .map(String::from)
            .to_vec(),
            url_shapes: [
                "/video/BV{id}",
                "/video/av{id}",
                "/video/BV{id}?p={n}",
                "/list/...?bvid=BV{id}",
                "/bangumi/play/ep{id}",
                "/bangumi/play/ss{id}",
                "/cheese/play/ss{id}",
                "/cheese/play/ep{id}",
                "short hosts b23.tv, bili2233.cn, bili22.cn, bili23.cn, bili33.cn: /{code}",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let kind = detect_input(input)?;
        Ok(Target {
            platform: PLATFORM.into(),
            id: kind.id(),
            canonical_url: kind.canonical_url(),
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        Ok(match step(target, ctx, done)? {
            Step::Fetch(requests) => Plan::Fetch(requests),
            Step::Ready(_) => Plan::Ready,
        })
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match step(target, ctx, done)? {
            Step::Ready(found) => Ok(Extraction {
                media: media::build(&found.object, &found.meta)?,
                platform_data: media::platform_data(&found.object, &found.meta),
            }),
            Step::Fetch(_) => Err(Failure::upstream(
                "map was called before every planned request was answered",
            )),
        }
    }
}

mediaparse_sdk::export_extractor!(Bilibili);

/// Where a parse stands, recomputed from the exchanges on every call.
enum Step {
    Fetch(Vec<HttpRequest>),
    Ready(Box<Found>),
}

/// The play-URL object that answered, and what the metadata said.
struct Found {
    object: Map<String, Value>,
    meta: Meta,
}

fn ready(object: Map<String, Value>, meta: Meta) -> Result<Step> {
    Ok(Step::Ready(Box::new(Found { object, meta })))
}

fn fetch(requests: Vec<HttpRequest>) -> Result<Step> {
    Ok(Step::Fetch(requests))
}

fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let url = if target.canonical_url.is_empty() {
        target.input.as_str()
    } else {
        target.canonical_url.as_str()
    };
    let mut kind = detect_input(url)?;
    for _ in 0..=MAX_SHORT_HOPS {
        let Kind::Short { url, .. } = &kind else {
            break;
        };
        let Some(exchange) = answer(done, url) else {
            return fetch(vec![
                HttpRequest::get(url.clone())
                    .no_redirects()
                    .header("User-Agent", upstream::USER_AGENT),
            ]);
        };
        kind = follow_short(exchange)?;
    }
    match kind {
        Kind::Video { bvid, page } => video(&bvid, page, ctx, done),
        Kind::Bangumi(which) => bangumi(which, ctx, done),
        Kind::Cheese(which) => cheese(which, ctx, done),
        Kind::Short { .. } => Err(Failure::upstream(
            "the short link redirects through too many short links",
        )),
    }
}

/// Where a short link's redirect leads; home pages, profiles and the like are errors.
fn follow_short(exchange: &Exchange) -> Result<Kind> {
    let response = &exchange.response;
    if response.is_redirect() {
        let location = response
            .location()
            .ok_or_else(|| Failure::changed("short link redirect without a Location"))?;
        let url = InputUrl::parse(&location).map_err(|_| {
            Failure::unsupported(format!("the short link leads to {location}, not a video"))
        })?;
        if url.host_in(&detect::SITE_HOSTS) && url.segments.is_empty() {
            return Err(Failure::unavailable(
                "the short link is invalid or expired (it leads to the home page)",
            ));
        }
        return classify(&url).map_err(|failure| match failure {
            Failure::UnsupportedUrl(why) => Failure::UnsupportedUrl(format!(
                "the short link leads to {location}, not a single video: {why}"
            )),
            other => other,
        });
    }
    match response.status {
        404 | 410 => Err(Failure::unavailable("the short link does not exist")),
        412 | 429 => Err(Failure::RateLimited(format!(
            "short link answered HTTP {}",
            response.status
        ))),
        status => Err(Failure::upstream(format!(
            "short link answered HTTP {status} without a redirect"
        ))),
    }
}

/// An API answer's `data`/`result` object, or the failure its code means.
fn api_object(exchange: &Exchange, what: &str, ctx: &Context) -> Result<Map<String, Value>> {
    let env = upstream::envelope(exchange, what).map_err(outcome_failure)?;
    if env.code != 0 {
        let message = format!("{what}: code {} {}", env.code, env.message);
        if upstream::is_risk_code(env.code) {
            return Err(Failure::RateLimited(message));
        }
        if env.code == -101 && ctx.config("cookie").is_none() {
            return Err(Failure::LoginRequired(message));
        }
        if let Some(reason) = upstream::unavailable_reason(env.code) {
            return Err(Failure::unavailable(format!("{reason} ({message})")));
        }
        return Err(Failure::upstream(message));
    }
    match env.data.or(env.result) {
        Some(Value::Object(object)) => Ok(object),
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

fn judge_api(exchange: &Exchange, what: &str, ctx: &Context) -> Outcome {
    match upstream::envelope(exchange, what) {
        Ok(env) => upstream::judge_playurl(env, what, ctx),
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

// ---------------------------------------------------------------- videos

#[derive(Clone, Debug, Default, Deserialize)]
struct Dimension {
    #[serde(default)]
    width: Option<u64>,
    #[serde(default)]
    height: Option<u64>,
    #[serde(default)]
    rotate: Option<u64>,
}

impl Dimension {
    /// Width and height as displayed (`rotate` 1 swaps them).
    fn displayed(&self) -> (u32, u32) {
        let w = u32::try_from(self.width.unwrap_or(0)).unwrap_or(0);
        let h = u32::try_from(self.height.unwrap_or(0)).unwrap_or(0);
        if self.rotate == Some(1) {
            (h, w)
        } else {
            (w, h)
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct ViewPage {
    #[serde(default)]
    cid: Option<Value>,
    #[serde(default)]
    page: Option<u32>,
    #[serde(default)]
    part: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    dimension: Option<Dimension>,
}

#[derive(Debug, Default, Deserialize)]
struct ViewData {
    #[serde(default)]
    aid: Option<Value>,
    #[serde(default)]
    cid: Option<Value>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    pic: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    pages: Option<Vec<ViewPage>>,
    #[serde(default)]
    dimension: Option<Dimension>,
    #[serde(default)]
    redirect_url: Option<String>,
    #[serde(default)]
    is_upower_exclusive: Option<bool>,
}

/// The episode id of a `redirect_url` to a bangumi episode page.
fn bangumi_redirect(redirect_url: &str) -> Option<u64> {
    let url = InputUrl::parse(redirect_url).ok()?;
    match classify(&url).ok()? {
        Kind::Bangumi(Pgc::Episode(ep)) => Some(ep),
        _ => None,
    }
}

const VIEW_EXTRAS: [&str; 7] = [
    "bvid",
    "desc",
    "owner",
    "pubdate",
    "stat",
    "pages",
    "dimension",
];

fn video(bvid: &str, page: u32, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let view_request = upstream::view_request(bvid);
    let Some(view_exchange) = answer(done, &view_request.url) else {
        return fetch(vec![
            view_request,
            upstream::nav_request(upstream::NAV_CACHE_SECONDS),
        ]);
    };
    let raw = api_object(view_exchange, "view", ctx)?;
    let view = ViewData::deserialize(&Value::Object(raw.clone()))
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
    let meta = video_meta(&view, &raw, part, pages.len(), page, &aid, &cid);

    let mut misses = Misses::default();
    // Primary: the WBI-signed playurl, keys from `nav`.
    let signed = answers(done, upstream::WBI_PLAYURL);
    let navs = answers(done, upstream::NAV);
    let keys = |exchange: Option<&&Exchange>| exchange.and_then(|e| nav_keys(e));
    match signed.last() {
        None => match keys(navs.last()) {
            Some(keys) => {
                return fetch(vec![upstream::wbi_playurl_request(bvid, &cid, &keys, ctx)]);
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
                            upstream::nav_request(0),
                            upstream::page_request(bvid, page, ctx),
                        ]);
                    }
                    let (first, fresh) = (keys(navs.first()), keys(navs.last()));
                    if let Some(fresh) = fresh.filter(|k| Some(k) != first.as_ref()) {
                        return fetch(vec![upstream::wbi_playurl_request(bvid, &cid, &fresh, ctx)]);
                    }
                }
            }
        },
    }
    // Fallback a: the video page's `window.__playinfo__`.
    let page_request = upstream::page_request(bvid, page, ctx);
    match answer(done, &page_request.url) {
        None => return fetch(vec![page_request]),
        Some(exchange) => match upstream::judge_page(exchange, ctx) {
            Outcome::Streams(object) => return ready(object, meta),
            Outcome::Fatal(failure) => return Err(failure),
            Outcome::Retry { risk, message } => misses.add(risk, message),
        },
    }
    // Fallback b: the legacy unsigned playurl, `platform=html5` MP4.
    let html5 = upstream::html5_playurl_request(&aid, bvid, &cid, ctx);
    match answer(done, &html5.url) {
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

fn video_meta(
    view: &ViewData,
    raw: &Map<String, Value>,
    part: Option<&ViewPage>,
    page_count: usize,
    page: u32,
    aid: &str,
    cid: &str,
) -> Meta {
    let title = view.title.clone().unwrap_or_default();
    let part_name = part.and_then(|p| p.part.clone()).unwrap_or_default();
    let shown_title = if page_count > 1 && !part_name.is_empty() && part_name != title {
        format!("{title} P{page} {part_name}")
    } else {
        title.clone()
    };
    let pic = https(view.pic.as_deref().unwrap_or_default());
    let (width, height) = part
        .and_then(|p| p.dimension.as_ref())
        .or(view.dimension.as_ref())
        .map(Dimension::displayed)
        .unwrap_or((0, 0));
    let mut extras = Map::new();
    extras.insert("aid".into(), Value::String(aid.into()));
    extras.insert("cid".into(), Value::String(cid.into()));
    extras.insert("page".into(), Value::from(page));
    extras.insert("part".into(), Value::String(part_name));
    for key in VIEW_EXTRAS {
        if let Some(v) = raw.get(key) {
            extras.insert(key.into(), v.clone());
        }
    }
    Meta {
        title: shown_title,
        thumbnail: pic.clone(),
        duration: part
            .and_then(|p| p.duration)
            .or(view.duration)
            .unwrap_or(0.0),
        width,
        height,
        pd_title: title,
        pd_pic: pic,
        extras,
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

#[derive(Clone, Debug, Default, Deserialize)]
struct Episode {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    aid: Option<Value>,
    #[serde(default)]
    cid: Option<Value>,
    #[serde(default)]
    bvid: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    long_title: Option<String>,
    #[serde(default)]
    cover: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    playable: Option<bool>,
    #[serde(default)]
    episode_can_view: Option<bool>,
    #[serde(default)]
    dimension: Option<Dimension>,
}

impl Episode {
    fn is(&self, id: u64) -> bool {
        id_string(self.id.as_ref()) == Some(id.to_string())
    }
}

fn episodes(list: Option<&Value>) -> Result<Vec<Episode>> {
    match list {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => Vec::<Episode>::deserialize(v)
            .map_err(|e| Failure::changed(format!("unexpected episode list ({e})"))),
    }
}

fn join_nonempty(parts: &[Option<&str>]) -> String {
    parts
        .iter()
        .flatten()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn bangumi(which: Pgc, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let (ep, from_section) = match which {
        Pgc::Episode(ep) => (ep, None),
        Pgc::Season(season) => {
            let request = upstream::pgc_section_request(season);
            let Some(exchange) = answer(done, &request.url) else {
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
    let season_request = upstream::pgc_season_request(ep);
    let v2_request = upstream::pgc_playurl_v2_request(ep, ctx);
    let missing: Vec<HttpRequest> = [season_request.clone(), v2_request.clone()]
        .into_iter()
        .filter(|r| answer(done, &r.url).is_none())
        .collect();
    if !missing.is_empty() {
        return fetch(missing);
    }
    let mut misses = Misses::default();
    // Episode info is for the title and cover; streams do not depend on it.
    let season = match answer(done, &season_request.url).map(|e| api_object(e, "season", ctx)) {
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

    if let Some(exchange) = answer(done, &v2_request.url) {
        match judge_api(exchange, "pgc playurl", ctx) {
            Outcome::Streams(object) => return ready(object, meta),
            Outcome::Fatal(failure) => return Err(failure),
            Outcome::Retry { risk, message } => misses.add(risk, message),
        }
    }
    let cid = episode.as_ref().and_then(|e| id_string(e.cid.as_ref()));
    let old_request = upstream::pgc_playurl_old_request(ep, cid.as_deref(), ctx);
    match answer(done, &old_request.url) {
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

fn pgc_meta(season: Option<&Map<String, Value>>, episode: Option<&Episode>, ep: u64) -> Meta {
    let season_title = season.and_then(|s| {
        s.get("season_title")
            .or_else(|| s.get("title"))
            .and_then(Value::as_str)
    });
    let title = join_nonempty(&[
        season_title,
        episode.and_then(|e| e.title.as_deref()),
        episode.and_then(|e| e.long_title.as_deref()),
    ]);
    let cover = episode
        .and_then(|e| e.cover.as_deref())
        .or_else(|| season.and_then(|s| s.get("cover")).and_then(Value::as_str))
        .map(https)
        .unwrap_or_default();
    let (width, height) = episode
        .and_then(|e| e.dimension.as_ref())
        .map(Dimension::displayed)
        .unwrap_or((0, 0));
    let mut extras = Map::new();
    extras.insert("ep_id".into(), Value::String(ep.to_string()));
    if let Some(id) = season.and_then(|s| id_string(s.get("season_id"))) {
        extras.insert("season_id".into(), Value::String(id));
    }
    if let Some(title) = season_title {
        extras.insert("season_title".into(), Value::String(title.into()));
    }
    if let Some(e) = episode {
        for (key, value) in [("aid", &e.aid), ("cid", &e.cid)] {
            if let Some(id) = id_string(value.as_ref()) {
                extras.insert(key.into(), Value::String(id));
            }
        }
        if let Some(bvid) = e.bvid.as_ref().filter(|b| !b.is_empty()) {
            extras.insert("bvid".into(), Value::String(bvid.clone()));
        }
        if let Some(long_title) = &e.long_title {
            extras.insert("long_title".into(), Value::String(long_title.clone()));
        }
    }
    Meta {
        title: title.clone(),
        thumbnail: cover.clone(),
        // Episode durations are not documented in one unit; the play URL's
        // `timelength` (ms) gives the real one.
        duration: 0.0,
        width,
        height,
        pd_title: title,
        pd_pic: cover,
        extras,
    }
}

// ---------------------------------------------------------------- courses

fn cheese(which: Pgc, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let request = match which {
        Pgc::Episode(ep) => upstream::pugv_season_request("ep_id", ep),
        Pgc::Season(season) => upstream::pugv_season_request("season_id", season),
    };
    let Some(exchange) = answer(done, &request.url) else {
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
    let play = upstream::pugv_playurl_request(&aid, &cid, &ep, ctx);
    let Some(exchange) = answer(done, &play.url) else {
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

fn cheese_meta(
    season: &Map<String, Value>,
    episode: &Episode,
    ep: &str,
    aid: &str,
    cid: &str,
) -> Meta {
    let course = season.get("title").and_then(Value::as_str);
    let title = join_nonempty(&[course, episode.title.as_deref()]);
    let cover = episode
        .cover
        .as_deref()
        .or_else(|| season.get("cover").and_then(Value::as_str))
        .map(https)
        .unwrap_or_default();
    let mut extras = Map::new();
    extras.insert("ep_id".into(), Value::String(ep.into()));
    extras.insert("aid".into(), Value::String(aid.into()));
    extras.insert("cid".into(), Value::String(cid.into()));
    if let Some(id) = id_string(season.get("season_id")) {
        extras.insert("season_id".into(), Value::String(id));
    }
    if let Some(course) = course {
        extras.insert("course_title".into(), Value::String(course.into()));
    }
    Meta {
        title: title.clone(),
        thumbnail: cover.clone(),
        duration: episode.duration.unwrap_or(0.0),
        width: 0,
        height: 0,
        pd_title: title,
        pd_pic: cover,
        extras,
    }
}
