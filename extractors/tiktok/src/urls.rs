//! TikTok URL shapes: which inputs name one post, which are short links to
//! resolve, and where a short link's redirect landed.

use mediaparse_sdk::links::Landing;
use mediaparse_sdk::share::first_url;
use mediaparse_sdk::urls::{InputUrl, is_alnum, is_digits};
use mediaparse_sdk::{Failure, Result, Target};

use crate::PLATFORM;

/// Hosts that serve post pages (and the `/t/{code}` short form on tiktok.com).
const POST_HOSTS: [&str; 6] = [
    "tiktok.com",
    "www.tiktok.com",
    "m.tiktok.com",
    "tiktokv.com",
    "www.tiktokv.com",
    "m.tiktokv.com",
];
/// Hosts whose `/t/{code}` path is a short link.
const T_HOSTS: [&str; 3] = ["tiktok.com", "www.tiktok.com", "m.tiktok.com"];
/// Short-link hosts: `/{code}`.
const SHORT_HOSTS: [&str; 2] = ["vm.tiktok.com", "vt.tiktok.com"];

/// Post ids are decimal, 18–19 digits today; cobalt caps them at 21.
const MAX_ID_LEN: usize = 21;
/// Short codes are letters and digits, about 7–12 characters seen.
const MAX_CODE_LEN: usize = 21;

/// One post, as an `/@{user}/video/{id}` or `/@{user}/photo/{id}` page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Post {
    /// The author's handle when the URL named a usable one, else `_`.
    pub user: String,
    pub id: String,
    pub photo: bool,
}

impl Post {
    /// The post page we fetch: photo posts are served through `/video/` too.
    pub fn page_url(&self) -> String {
        format!("https://www.tiktok.com/@{}/video/{}", self.user, self.id)
    }

    pub fn canonical_url(&self) -> String {
        let kind = if self.photo { "photo" } else { "video" };
        format!("https://www.tiktok.com/@{}/{kind}/{}", self.user, self.id)
    }
}

/// A short link still to be resolved through its redirect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Short {
    pub code: String,
    /// The short link as the caller gave it (normalized).
    pub canonical: String,
    /// The URL we ask for. `vm.tiktok.com` codes go to `vt.tiktok.com`,
    /// which serves the same codes (cobalt ef687750: the `vm` DNS records
    /// disappeared in 2025-01).
    pub fetch_url: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    Post(Post),
    Short(Short),
}

/// Recognise a caller's input: one post, or a short link resolved in the flow.
pub fn detect(input: &str) -> Result<Target> {
    // The app copies bare URLs; text around one is tolerated.
    let text = first_url(input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&text)?;
    let (id, canonical_url) = match classify(&url) {
        Some(Link::Post(post)) => (post.id.clone(), post.canonical_url()),
        Some(Link::Short(short)) => (short.code, short.canonical),
        None => {
            return Err(Failure::unsupported(
                "not a single TikTok post (profiles, live, sounds, tags, search, collections and playlists are not supported)",
            ));
        }
    };
    Ok(Target::new(PLATFORM, id, canonical_url, input))
}

/// Recognise a TikTok URL; `None` for anything that is not a single post
/// or a short link (profiles, live, sounds, tags, search, collections, ...).
pub fn classify(url: &InputUrl) -> Option<Link> {
    if url.host_in(&SHORT_HOSTS) {
        let caps = url.path("/{code}")?;
        let code = short_code(caps.get("code")?)?;
        let fetch_url = format!("https://vt.tiktok.com/{code}/");
        return Some(Link::Short(Short {
            canonical: format!("https://{}/{code}/", url.host),
            code,
            fetch_url,
        }));
    }
    if !url.host_in(&POST_HOSTS) {
        return None;
    }
    if url.host_in(&T_HOSTS)
        && let Some(caps) = url.path("/t/{code}")
    {
        let code = short_code(caps.get("code")?)?;
        let fetch_url = format!("https://www.tiktok.com/t/{code}/");
        return Some(Link::Short(Short {
            canonical: fetch_url.clone(),
            code,
            fetch_url,
        }));
    }
    for (shape, photo) in [
        ("/@{user?}/video/{id}", false),
        ("/@{user?}/photo/{id}", true),
    ] {
        if let Some(caps) = url.path(shape) {
            let id = post_id(caps.get("id")?)?;
            return Some(Link::Post(Post {
                user: handle(caps.get("user").unwrap_or_default()),
                id,
                photo,
            }));
        }
    }
    // Aliases other projects accept; all map to `/@_/video/{id}`.
    for shape in [
        "/share/video/{id}",
        "/i18n/share/video/{id}",
        "/embed/{id}",
        "/embed/v2/{id}",
        "/v/{id}.html",
    ] {
        if let Some(caps) = url.path(shape) {
            let id = post_id(caps.get("id")?)?;
            return Some(Link::Post(Post {
                user: "_".into(),
                id,
                photo: false,
            }));
        }
    }
    None
}

fn post_id(raw: &str) -> Option<String> {
    (is_digits(raw) && raw.len() <= MAX_ID_LEN).then(|| raw.to_string())
}

fn short_code(raw: &str) -> Option<String> {
    (is_alnum(raw) && raw.len() <= MAX_CODE_LEN).then(|| raw.to_string())
}

/// A handle usable in the page URL: letters, digits, `_`, `.`, `-`.
/// Anything else (or nothing) becomes `_`, which TikTok serves as well.
fn handle(raw: &str) -> String {
    let ok = !raw.is_empty()
        && raw.len() <= 64
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok { raw.to_string() } else { "_".into() }
}

/// Judge a short link's redirect target: a post, another short link, or an
/// error (home page or not-found page → unavailable, login → login wall,
/// any other page such as a profile → not a single post).
pub fn landing(url: &InputUrl) -> Landing<Post> {
    if !url.host_in(&["*.tiktok.com", "*.tiktokv.com"]) {
        return Landing::Failed(Failure::unsupported(
            "the short link does not lead to a TikTok post",
        ));
    }
    match classify(url) {
        Some(Link::Post(post)) => return Landing::Arrived(post),
        Some(Link::Short(short)) => return Landing::Hop(short.fetch_url),
        None => {}
    }
    Landing::Failed(
        if url.segments.is_empty() || url.segments.iter().any(|s| s.contains("notfound")) {
            Failure::unavailable(
                "the short link leads to TikTok's home or not-found page (expired, deleted or region-blocked)",
            )
        } else if url.segments.first().is_some_and(|s| s == "login") {
            Failure::LoginRequired("the short link leads to TikTok's login page".into())
        } else {
            Failure::unsupported("the short link leads to a TikTok page that is not a single post")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn land(url: &str) -> Landing<Post> {
        landing(&InputUrl::parse(url).unwrap())
    }

    fn link(url: &str) -> Option<Link> {
        classify(&InputUrl::parse(url).unwrap())
    }

    #[test]
    fn handles_fall_back_to_underscore() {
        assert_eq!(handle("vantoan___"), "vantoan___");
        assert_eq!(handle("a.b-c"), "a.b-c");
        assert_eq!(handle(""), "_");
        assert_eq!(handle("émilie"), "_");
        assert_eq!(handle("a?b"), "_");
    }

    #[test]
    fn vm_codes_are_fetched_through_vt() {
        let Some(Link::Short(s)) = link("https://VM.TikTok.com/ZMabc123/") else {
            panic!("not a short link")
        };
        assert_eq!(s.canonical, "https://vm.tiktok.com/ZMabc123/");
        assert_eq!(s.fetch_url, "https://vt.tiktok.com/ZMabc123/");
    }

    #[test]
    fn landings() {
        assert_eq!(
            land("https://www.tiktok.com/@a.b/photo/7240568259186019630?_r=1&_t=x"),
            Landing::Arrived(Post {
                user: "a.b".into(),
                id: "7240568259186019630".into(),
                photo: true
            })
        );
        assert_eq!(
            land("https://vt.tiktok.com/ZSabc/"),
            Landing::Hop("https://vt.tiktok.com/ZSabc/".into())
        );
        let code = |l: &str| match land(l) {
            Landing::Failed(f) => f.code(),
            other => panic!("{l}: {other:?}"),
        };
        assert_eq!(code("https://www.tiktok.com/?_r=1"), "content_unavailable");
        assert_eq!(
            code("https://www.tiktok.com/notfound?lang=en"),
            "content_unavailable"
        );
        assert_eq!(
            code("https://www.tiktok.com/login?redirect_url=x"),
            "login_required"
        );
        assert_eq!(code("https://www.tiktok.com/@someone"), "302");
        assert_eq!(code("https://example.com/@a/video/1"), "302");
    }
}
