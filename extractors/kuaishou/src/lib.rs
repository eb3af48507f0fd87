//! Kuaishou: the mobile share page's `window.INIT_STATE` (obfuscated keys:
//! the value holding both `result` and `photo`), with the desktop page's
//! `window.__APOLLO_STATE__` as fallback. Share tokens are resolved hop by
//! hop and the cookies they set are sent on to the share page.
//! No real capture exists yet: see docs/platforms/kuaishou.md.

mod photo;
pub mod urls;

use mediaparse_sdk::cookies::{join, set_cookies};
use mediaparse_sdk::html::assigned_value;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, HttpResponse, Info, Plan,
    Result, Target, jsobj,
};
use serde_json::{Map, Value};

use urls::Link;

pub const PLATFORM: &str = "kuaishou";
pub const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
pub const DESKTOP_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36";
const MAX_HOPS: usize = 4;

pub struct Kuaishou;

impl Extractor for Kuaishou {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: [
                "*.kuaishou.com",
                "*.chenzhongtech.com",
                "*.gifshow.com",
                "*.kwai.com",
            ]
            .map(String::from)
            .to_vec(),
            api_hosts: [
                "v.kuaishou.com",
                "www.kuaishou.com",
                "*.m.chenzhongtech.com",
                "m.gifshow.com",
            ]
            .map(String::from)
            .to_vec(),
            url_shapes: [
                "/short-video/{id}",
                "/f/{token}",
                "v.kuaishou.com/{token}",
                "/fw/photo/{id} (m.chenzhongtech.com, m.gifshow.com)",
                "kwai.com/@{user}/video/{id}",
                "any of these with ?photoId= / ?photo_id=",
                "share text holding a URL",
            ]
            .map(String::from)
            .to_vec(),
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let url = urls::input_url(input)?;
        let (id, canonical_url) = match urls::classify(&url)? {
            Link::Photo { id, .. } => {
                let canonical = urls::canonical_photo(&id);
                (id, canonical)
            }
            Link::Short { token, url } => (token, url),
        };
        Ok(Target {
            platform: PLATFORM.into(),
            id,
            canonical_url,
            input: input.into(),
        })
    }

    fn plan(target: &Target, _ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        Ok(match step(target, done)? {
            Step::Fetch(request) => Plan::one(request),
            Step::Found { .. } => Plan::Ready,
        })
    }

    fn map(target: &Target, _ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        match step(target, done)? {
            Step::Fetch(_) => Err(Failure::upstream("the post was not fetched")),
            Step::Found { photo, id } => Ok(Extraction {
                media: photo::to_media(&photo),
                platform_data: photo::platform_data(&photo, &id),
            }),
        }
    }
}

enum Step {
    Fetch(HttpRequest),
    Found { photo: Value, id: String },
}

#[derive(Clone, Debug, PartialEq)]
enum Miss {
    AntiBot,
    NotFound,
    Status(u16),
    Changed(String),
}

fn last<'a>(done: &'a [Exchange], url: &str) -> Option<&'a HttpResponse> {
    done.iter()
        .rev()
        .find(|e| e.request.url == url)
        .map(|e| &e.response)
}

/// The link to work from: the caller's input when it still classifies
/// (it may name a share page), else the canonical URL.
fn link_of(target: &Target) -> Result<Link> {
    urls::input_url(&target.input)
        .and_then(|u| urls::classify(&u))
        .or_else(|_| {
            urls::classify(&mediaparse_sdk::urls::InputUrl::parse(
                &target.canonical_url,
            )?)
        })
}

/// A resolved share link: photo id, the share page a redirect named (if
/// any), and the `Cookie` value the redirects set.
type Resolved = (String, Option<String>, String);

/// Follow a share token hop by hop until a photo id appears. Returns the
/// id, the share page a redirect named (if any) and the cookies set.
fn resolve_short(
    start: &str,
    done: &[Exchange],
) -> Result<std::result::Result<Resolved, HttpRequest>> {
    let mut url = start.to_string();
    let mut cookies: Vec<(String, String)> = Vec::new();
    for _ in 0..MAX_HOPS {
        let Some(response) = last(done, &url) else {
            let mut request = HttpRequest::get(&url)
                .header("User-Agent", MOBILE_UA)
                .header("Referer", "https://v.kuaishou.com/")
                .no_redirects();
            if !cookies.is_empty() {
                request = request.header("Cookie", join(&cookies));
            }
            return Ok(Err(request));
        };
        for (name, value) in set_cookies(response) {
            match cookies.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => cookies.push((name, value)),
            }
        }
        if response.status == 429 {
            return Err(Failure::RateLimited(
                "the share-link host is rate-limiting".into(),
            ));
        }
        if response.status >= 500 {
            return Err(Failure::upstream(format!(
                "the share-link host answered {}",
                response.status
            )));
        }
        let location = match response.location() {
            Some(location) if response.is_redirect() => location,
            _ => {
                return Err(Failure::unsupported(
                    "the share link does not redirect to a post (expired token)",
                ));
            }
        };
        let landing = mediaparse_sdk::urls::InputUrl::parse(&location)?;
        match urls::classify(&landing) {
            Ok(Link::Photo { id, page }) => return Ok(Ok((id, page, join(&cookies)))),
            Ok(Link::Short { url: next, .. }) => url = next,
            Err(_) => {
                return Err(Failure::unsupported(format!(
                    "the share link leads to {}{}, which is not a Kuaishou post",
                    landing.host,
                    landing.url.path()
                )));
            }
        }
    }
    Err(Failure::unsupported("too many share-link redirects"))
}

fn step(target: &Target, done: &[Exchange]) -> Result<Step> {
    let (id, page, cookie) = match link_of(target)? {
        Link::Photo { id, page } => (id, page, String::new()),
        Link::Short { url, .. } => match resolve_short(&url, done)? {
            Ok(found) => found,
            Err(request) => return Ok(Step::Fetch(request)),
        },
    };
    let mut misses = Vec::new();

    // Strategy 1: the mobile share page's INIT_STATE.
    let mobile = page.unwrap_or_else(|| urls::mobile_page(&id));
    let Some(response) = last(done, &mobile) else {
        let mut request = HttpRequest::get(&mobile)
            .header("User-Agent", MOBILE_UA)
            .header("Referer", "https://v.m.chenzhongtech.com/");
        if !cookie.is_empty() {
            request = request.header("Cookie", cookie);
        }
        return Ok(Step::Fetch(request));
    };
    match read_mobile(response)? {
        Ok(photo) => return Ok(Step::Found { photo, id }),
        Err(miss) => misses.push(miss),
    }

    // Strategy 2: the desktop page's Apollo cache.
    let desktop = urls::canonical_photo(&id);
    let Some(response) = last(done, &desktop) else {
        return Ok(Step::Fetch(
            HttpRequest::get(&desktop).header("User-Agent", DESKTOP_UA),
        ));
    };
    match read_desktop(response, &id)? {
        Ok(photo) => return Ok(Step::Found { photo, id }),
        Err(miss) => misses.push(miss),
    }
    Err(verdict(&misses))
}

fn verdict(misses: &[Miss]) -> Failure {
    if misses.contains(&Miss::AntiBot) {
        return Failure::RateLimited(
            "Kuaishou asked for verification (captcha or antispam)".into(),
        );
    }
    if misses.contains(&Miss::NotFound) {
        return Failure::unavailable("Kuaishou has no such post");
    }
    if let Some(status) = misses.iter().find_map(|m| match m {
        Miss::Status(s) => Some(*s),
        _ => None,
    }) {
        return Failure::upstream(format!("Kuaishou answered HTTP {status}"));
    }
    let detail = misses
        .iter()
        .find_map(|m| match m {
            Miss::Changed(d) => Some(d.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "no strategy found the post".into());
    Failure::changed(detail)
}

fn is_verification_page(text: &str) -> bool {
    text.contains("captcha.zt.kuaishou.com")
        || text.contains("请求过快")
        || text.contains("captchaSession")
}

fn page_text(response: &HttpResponse) -> std::result::Result<String, Miss> {
    match response.status {
        404 | 410 => return Err(Miss::NotFound),
        403 | 429 => return Err(Miss::AntiBot),
        s if !response.is_success() => return Err(Miss::Status(s)),
        _ => {}
    }
    let text = response.text().into_owned();
    if is_verification_page(&text) {
        return Err(Miss::AntiBot);
    }
    Ok(text)
}

fn result_code(v: &Value) -> Option<i64> {
    let r = v.get("result")?;
    r.as_i64()
        .or_else(|| r.as_str().and_then(|s| s.parse().ok()))
}

/// `Ok(Err(miss))` moves on to the next strategy; `Err` is final.
fn read_mobile(response: &HttpResponse) -> Result<std::result::Result<Value, Miss>> {
    let text = match page_text(response) {
        Ok(text) => text,
        Err(miss) => return Ok(Err(miss)),
    };
    // A blocked request gets a bare `{"result":2}` (63-byte replies).
    if let Ok(bare) = serde_json::from_str::<Value>(text.trim()) {
        return Ok(Err(match result_code(&bare) {
            Some(2) | Some(2001) => Miss::AntiBot,
            _ => Miss::Changed("the share page answered JSON without a photo".into()),
        }));
    }
    let Some(raw) = assigned_value(&text, "window.INIT_STATE") else {
        return Ok(Err(Miss::Changed(
            "the share page has no INIT_STATE".into(),
        )));
    };
    let state = jsobj::parse(raw).map_err(|e| Failure::changed(format!("INIT_STATE: {e}")))?;
    // Keys are obfuscated (every character shifted by one): find the value
    // that holds both `result` and `photo`.
    let holder = state.as_object().and_then(|members| {
        members
            .values()
            .find(|v| v.get("result").is_some() && v.get("photo").is_some())
    });
    let Some(holder) = holder else {
        return Ok(Err(
            match state
                .as_object()
                .and_then(|m| m.values().find_map(result_code))
            {
                Some(2) | Some(2001) => Miss::AntiBot,
                _ => Miss::Changed("INIT_STATE holds no photo".into()),
            },
        ));
    };
    match result_code(holder) {
        Some(1) => {}
        Some(2) | Some(2001) => return Ok(Err(Miss::AntiBot)),
        Some(223) => {
            return Err(Failure::unavailable(
                "the post was deleted or never finished uploading",
            ));
        }
        Some(226) => return Err(Failure::unavailable("the post is under review")),
        Some(other) => return Ok(Err(Miss::Changed(format!("INIT_STATE result {other}")))),
        None => {
            return Ok(Err(Miss::Changed(
                "INIT_STATE result is not a number".into(),
            )));
        }
    }
    match holder.get("photo") {
        Some(photo @ Value::Object(_)) => Ok(Ok(photo.clone())),
        _ => Ok(Err(Miss::NotFound)),
    }
}

/// Resolve Apollo references (`{"type":"id","id":…}`) and JSON scalars
/// (`{"type":"json","json":…}`) in a cached record.
fn resolve(value: &Value, cache: &Map<String, Value>, depth: usize) -> Value {
    if depth > 12 {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str);
            if kind == Some("json")
                && map.len() <= 4
                && let Some(inner) = map.get("json")
            {
                return inner.clone();
            }
            if kind == Some("id")
                && map.len() <= 4
                && let Some(id) = map.get("id").and_then(Value::as_str)
                && let Some(target) = cache
                    .get(id)
                    .or_else(|| cache.get(id.trim_start_matches('$')))
            {
                return resolve(target, cache, depth + 1);
            }
            Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "__typename")
                    .map(|(k, v)| (k.clone(), resolve(v, cache, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| resolve(v, cache, depth + 1)).collect())
        }
        other => other.clone(),
    }
}

fn read_desktop(response: &HttpResponse, id: &str) -> Result<std::result::Result<Value, Miss>> {
    let text = match page_text(response) {
        Ok(text) => text,
        Err(miss) => return Ok(Err(miss)),
    };
    let Some(raw) = assigned_value(&text, "window.__APOLLO_STATE__") else {
        return Ok(Err(Miss::Changed(
            "the desktop page has no __APOLLO_STATE__".into(),
        )));
    };
    let state =
        jsobj::parse(raw).map_err(|e| Failure::changed(format!("__APOLLO_STATE__: {e}")))?;
    let Some(cache) = state.get("defaultClient").and_then(Value::as_object) else {
        return Ok(Err(Miss::Changed(
            "__APOLLO_STATE__ has no defaultClient".into(),
        )));
    };
    let detail = cache
        .get("ROOT_QUERY")
        .and_then(Value::as_object)
        .and_then(|root| {
            root.iter()
                .find(|(k, _)| k.starts_with("visionVideoDetail("))
                .map(|(_, v)| resolve(v, cache, 0))
        });
    let status = detail.as_ref().and_then(|d| d.get("status")).and_then(|s| {
        s.as_i64()
            .or_else(|| s.as_str().and_then(|t| t.parse().ok()))
    });
    match status {
        Some(1040) | Some(1041) => return Ok(Err(Miss::AntiBot)),
        Some(2) => return Ok(Err(Miss::NotFound)),
        _ => {}
    }
    let record = cache
        .get(&format!("VisionVideoDetailPhoto:{id}"))
        .map(|r| resolve(r, cache, 0))
        .or_else(|| {
            detail
                .as_ref()
                .and_then(|d| d.get("photo"))
                .filter(|p| p.is_object())
                .cloned()
        });
    let Some(Value::Object(record)) = record else {
        return Ok(Err(Miss::Changed(
            "the Apollo cache holds no photo record".into(),
        )));
    };
    let author = detail
        .as_ref()
        .and_then(|d| d.get("author"))
        .filter(|a| a.is_object())
        .cloned()
        .or_else(|| {
            cache
                .iter()
                .find(|(k, _)| k.starts_with("VisionVideoDetailAuthor:"))
                .map(|(_, v)| resolve(v, cache, 0))
        });
    Ok(Ok(photo::from_desktop(record, author)))
}

mediaparse_sdk::export_extractor!(Kuaishou);
