//! The upstream rounds. Extractors keep no state, so every call re-reads
//! `done` and walks the same decision list: short-link hops, then
//! slidesinfo (and its `request_source=200` retry), the share page (one
//! retry on an empty frame), and the web API when the operator set `cookie`.

use mediaparse_sdk::html::assigned_value;
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest, HttpResponse, Result, Target};
use serde_json::Value;

use crate::urls::{self, Link};
use crate::{DESKTOP_UA, MOBILE_UA};

/// What the next call should do.
pub enum Step {
    Fetch(Vec<HttpRequest>),
    /// A direct media URL: nothing to fetch.
    Direct(Link),
    /// The aweme object, found by one of the strategies.
    Found(Value),
}

/// Short-link hops followed at most.
const MAX_HOPS: usize = 3;

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let link = urls::classify(&InputUrl::parse(&target.canonical_url)?)?;
    let (id, note) = match link {
        Link::Direct { .. } => return Ok(Step::Direct(link)),
        Link::Post { id, note } => (id, note),
        Link::Short { code } => match resolve_short(&code, done)? {
            Ok(post) => post,
            Err(request) => return Ok(Step::Fetch(vec![request])),
        },
    };
    post(&id, note, ctx, done)
}

fn find<'a>(done: &'a [Exchange], url: &str) -> Vec<&'a HttpResponse> {
    done.iter()
        .filter(|e| e.request.url == url)
        .map(|e| &e.response)
        .collect()
}

/// Follow `v.douyin.com` redirects (planned hop by hop) to a post id, or
/// say which hop to fetch next.
fn resolve_short(
    code: &str,
    done: &[Exchange],
) -> Result<std::result::Result<(String, bool), HttpRequest>> {
    let mut url = urls::short_url(code);
    for _ in 0..MAX_HOPS {
        let Some(response) = find(done, &url).pop() else {
            let request = HttpRequest::get(&url)
                .header("User-Agent", MOBILE_UA)
                .no_redirects();
            return Ok(Err(request));
        };
        if response.status == 429 {
            return Err(Failure::RateLimited(
                "the short-link host is rate-limiting".into(),
            ));
        }
        if response.status >= 500 {
            return Err(Failure::upstream(format!(
                "the short-link host answered {}",
                response.status
            )));
        }
        let location = match response.location() {
            Some(location) if response.is_redirect() => location,
            _ => {
                return Err(Failure::unsupported(
                    "the short link does not redirect to a post (expired or invalid code)",
                ));
            }
        };
        let landing = InputUrl::parse(&location)?;
        match urls::classify(&landing) {
            Ok(Link::Post { id, note }) => return Ok(Ok((id, note))),
            Ok(Link::Short { code }) => url = urls::short_url(&code),
            Ok(Link::Direct { .. }) | Err(_) => {
                return Err(Failure::unsupported(format!(
                    "the short link leads to {}{}, which is not a Douyin post",
                    landing.host,
                    landing.url.path()
                )));
            }
        }
    }
    Err(Failure::unsupported("too many short-link redirects"))
}

/// Why a strategy produced no post.
#[derive(Clone, Debug, PartialEq)]
enum Miss {
    /// The endpoint answered, with no post in it.
    Empty,
    /// Anti-bot or challenge page, or HTTP 429.
    AntiBot,
    /// "抱歉出错了" / app-only page.
    Blocked,
    /// The share page came back as an empty frame (worth one retry).
    EmptyFrame,
    /// The web API answered an empty body: the operator cookie is stale.
    NeedsCookie,
    /// An HTTP error status.
    Status(u16),
    /// The answer is not the shape we know.
    Changed(String),
}

enum Outcome {
    Found(Value),
    Miss(Miss),
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
    HttpRequest::get(url).header("User-Agent", MOBILE_UA)
}

fn post(id: &str, note: bool, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let mut misses = Vec::new();

    // Strategy 1: slidesinfo; notes need request_source=200, and a video
    // lookup that comes back empty is retried with it.
    let mut slides = vec![slidesinfo_url(id, note)];
    if !note {
        slides.push(slidesinfo_url(id, true));
    }
    for url in slides {
        let Some(response) = find(done, &url).pop() else {
            return Ok(Step::Fetch(vec![mobile_get(url)]));
        };
        match read_slidesinfo(response)? {
            Outcome::Found(aweme) => return Ok(Step::Found(aweme)),
            Outcome::Miss(miss) => {
                let retry = miss == Miss::Empty;
                misses.push(miss);
                if !retry {
                    break;
                }
            }
        }
    }

    // Strategy 2: the share page's _ROUTER_DATA, once more on an empty frame.
    let url = share_page_url(id, note);
    let answers = find(done, &url);
    match answers.last() {
        None => return Ok(Step::Fetch(vec![mobile_get(url)])),
        Some(response) => match read_share_page(response)? {
            Outcome::Found(aweme) => return Ok(Step::Found(aweme)),
            Outcome::Miss(Miss::EmptyFrame) if answers.len() < 2 => {
                return Ok(Step::Fetch(vec![mobile_get(url)]));
            }
            Outcome::Miss(miss) => misses.push(miss),
        },
    }

    // Strategy 3: the web API, only with the operator's browser cookie.
    if let Some(cookie) = ctx.config("cookie") {
        let url = web_api_url(id);
        let Some(response) = find(done, &url).pop() else {
            let request = HttpRequest::get(url)
                .header("User-Agent", DESKTOP_UA)
                .header("Referer", format!("https://www.douyin.com/video/{id}"))
                .header("Cookie", cookie);
            return Ok(Step::Fetch(vec![request]));
        };
        match read_web_api(response)? {
            Outcome::Found(aweme) => return Ok(Step::Found(aweme)),
            Outcome::Miss(miss) => misses.push(miss),
        }
    }
    Err(verdict(&misses))
}

/// The error for a post every strategy missed, strongest signal first.
fn verdict(misses: &[Miss]) -> Failure {
    if misses.contains(&Miss::AntiBot) {
        return Failure::RateLimited("Douyin answered with an anti-bot challenge".into());
    }
    if misses.contains(&Miss::NeedsCookie) {
        return Failure::LoginRequired(
            "the web API needs a fresh browser cookie (operator setting `cookie`)".into(),
        );
    }
    if misses.contains(&Miss::Empty) {
        return Failure::unavailable("Douyin returned no post for this id (deleted or hidden)");
    }
    if misses.contains(&Miss::Blocked) {
        return Failure::upstream("Douyin shows this post only in its app");
    }
    if let Some(status) = misses.iter().find_map(|m| match m {
        Miss::Status(s) => Some(*s),
        _ => None,
    }) {
        return Failure::upstream(format!("Douyin answered HTTP {status}"));
    }
    let detail = misses
        .iter()
        .find_map(|m| match m {
            Miss::Changed(d) => Some(d.as_str()),
            _ => None,
        })
        .unwrap_or("no strategy found the post");
    Failure::changed(detail.to_string())
}

/// Markers of ByteDance's anti-bot pages (WAF proof-of-work, JSVMP).
fn is_anti_bot(text: &str) -> bool {
    [
        "waf-jschallenge",
        "_wafchallengeid",
        "byted_acrawler",
        "__ac_nonce",
    ]
    .iter()
    .any(|m| text.contains(m))
}

fn is_blocked_page(text: &str) -> bool {
    text.contains("抱歉出错了") || text.contains("请尝试在抖音内观看")
}

/// Common HTTP-level signals; `None` when the body should be read.
fn http_miss(response: &HttpResponse) -> Option<Miss> {
    if matches!(response.status, 429 | 403) {
        return Some(Miss::AntiBot);
    }
    if !response.is_success() {
        return Some(Miss::Status(response.status));
    }
    None
}

/// `{"aweme_details":[…]}`: the first item, or why there is none.
fn read_slidesinfo(response: &HttpResponse) -> Result<Outcome> {
    if let Some(miss) = http_miss(response) {
        return Ok(Outcome::Miss(miss));
    }
    let text = response.text();
    if is_anti_bot(&text) {
        return Ok(Outcome::Miss(Miss::AntiBot));
    }
    let Ok(body) = serde_json::from_str::<Value>(&text) else {
        if is_blocked_page(&text) {
            return Ok(Outcome::Miss(Miss::Blocked));
        }
        return Ok(Outcome::Miss(Miss::Changed(
            "slidesinfo did not answer JSON".into(),
        )));
    };
    check_filters(&body)?;
    match body.get("aweme_details") {
        Some(Value::Array(items)) => Ok(match items.first() {
            Some(item @ Value::Object(_)) => Outcome::Found(item.clone()),
            Some(_) => Outcome::Miss(Miss::Changed("slidesinfo item is not an object".into())),
            None => Outcome::Miss(Miss::Empty),
        }),
        Some(Value::Null) => Ok(Outcome::Miss(Miss::Empty)),
        _ => Ok(Outcome::Miss(Miss::Changed(
            "slidesinfo answer has no aweme_details".into(),
        ))),
    }
}

/// `window._ROUTER_DATA = {"loaderData":{"video_(id)/page":{"videoInfoRes":…}}}`.
fn read_share_page(response: &HttpResponse) -> Result<Outcome> {
    if let Some(miss) = http_miss(response) {
        return Ok(Outcome::Miss(miss));
    }
    let text = response.text();
    if text.trim().is_empty() {
        return Ok(Outcome::Miss(Miss::EmptyFrame));
    }
    if is_anti_bot(&text) {
        return Ok(Outcome::Miss(Miss::AntiBot));
    }
    let Some(raw) = assigned_value(&text, "window._ROUTER_DATA") else {
        if is_blocked_page(&text) {
            return Ok(Outcome::Miss(Miss::Blocked));
        }
        return Ok(Outcome::Miss(Miss::Changed(
            "the share page has no _ROUTER_DATA".into(),
        )));
    };
    let data = serde_json::from_str::<Value>(raw)
        .or_else(|_| mediaparse_sdk::jsobj::parse(raw))
        .map_err(|e| Failure::changed(format!("_ROUTER_DATA is not JSON: {e}")))?;
    let info = data
        .get("loaderData")
        .and_then(Value::as_object)
        .and_then(|pages| pages.values().find_map(|page| page.get("videoInfoRes")));
    let Some(info) = info else {
        // Since 2026-08 the page often loads the post client side.
        return Ok(Outcome::Miss(Miss::Changed(
            "the share page carries no videoInfoRes".into(),
        )));
    };
    check_filters(info)?;
    match info.get("item_list").and_then(Value::as_array) {
        Some(items) => Ok(match items.first() {
            Some(item @ Value::Object(_)) => Outcome::Found(item.clone()),
            _ => Outcome::Miss(Miss::Empty),
        }),
        None => Ok(Outcome::Miss(Miss::Changed(
            "videoInfoRes has no item_list".into(),
        ))),
    }
}

/// `{"aweme_detail":{…}}`, or `null` with `status_code`/`filter_detail`.
fn read_web_api(response: &HttpResponse) -> Result<Outcome> {
    if let Some(miss) = http_miss(response) {
        return Ok(Outcome::Miss(miss));
    }
    let text = response.text();
    if text.trim().is_empty() {
        return Ok(Outcome::Miss(Miss::NeedsCookie));
    }
    if is_anti_bot(&text) {
        return Ok(Outcome::Miss(Miss::AntiBot));
    }
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::changed(format!("the web API did not answer JSON: {e}")))?;
    match body.get("aweme_detail") {
        Some(item @ Value::Object(_)) => Ok(Outcome::Found(item.clone())),
        Some(Value::Null) | None => {
            let filter = body
                .get("filter_detail")
                .and_then(|f| f.get("filter_reason").or_else(|| f.get("detail_msg")))
                .and_then(Value::as_str)
                .or_else(|| body.get("status_msg").and_then(Value::as_str))
                .unwrap_or("filtered");
            Err(Failure::unavailable(format!(
                "Douyin filtered this post ({filter})"
            )))
        }
        Some(_) => Ok(Outcome::Miss(Miss::Changed(
            "aweme_detail is not an object".into(),
        ))),
    }
}

/// `filter_list[]` entries say why a post is hidden: private, friends
/// only, deleted. Each is final.
fn check_filters(container: &Value) -> Result<()> {
    let Some(filters) = container.get("filter_list").and_then(Value::as_array) else {
        return Ok(());
    };
    let Some(filter) = filters.first() else {
        return Ok(());
    };
    let field = |name: &str| {
        filter
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let reason = field("filter_reason");
    let message = [field("detail_msg"), field("notice")].join(" ");
    let lower = reason.to_ascii_lowercase();
    let has_items = container
        .get("item_list")
        .or_else(|| container.get("aweme_details"))
        .and_then(Value::as_array)
        .is_some_and(|items| !items.is_empty());
    if has_items {
        return Ok(());
    }
    if ["self_see", "private", "friend"]
        .iter()
        .any(|k| lower.contains(k))
    {
        return Err(Failure::unavailable(format!(
            "the post is private or visible to friends only ({reason})"
        )));
    }
    if message.contains("删除") || message.contains("不存在") {
        return Err(Failure::unavailable(format!(
            "the post was deleted ({})",
            message.trim()
        )));
    }
    Err(Failure::unavailable(format!(
        "Douyin filtered this post ({reason})"
    )))
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

    #[test]
    fn verdict_prefers_the_strongest_signal() {
        assert_eq!(
            verdict(&[Miss::Empty, Miss::AntiBot]).code(),
            "upstream_rate_limited"
        );
        assert_eq!(
            verdict(&[Miss::Empty, Miss::Changed("x".into())]).code(),
            "content_unavailable"
        );
        assert_eq!(verdict(&[Miss::NeedsCookie]).code(), "login_required");
        assert_eq!(
            verdict(&[Miss::Changed("x".into())]).code(),
            "upstream_error"
        );
    }

    #[test]
    fn filters_map_to_unavailable() {
        let private: Value = serde_json::json!({"item_list":[],"filter_list":[{"aweme_id":"1","filter_reason":"self_see","detail_msg":"","notice":""}]});
        assert_eq!(
            check_filters(&private).unwrap_err().code(),
            "content_unavailable"
        );
        let friends: Value =
            serde_json::json!({"item_list":[],"filter_list":[{"filter_reason":"friend_see"}]});
        assert!(check_filters(&friends).is_err());
        let none: Value = serde_json::json!({"item_list":[{"aweme_id":"1"}],"filter_list":[]});
        assert!(check_filters(&none).is_ok());
    }
}
