//! Facts of SPEC.md that both the host and extractor tests check against:
//! the per-platform ones come from each extractor's `platform.toml`.

use std::sync::Mutex;

use serde_json::Value;

pub use mediaparse_catalogue::Kind;
#[cfg(not(target_arch = "wasm32"))]
pub use mediaparse_catalogue::Manifest;

/// The listed members of every platform this process knows: the one
/// `export_extractor!` compiles into a component, and natively the
/// registered ones plus `$CARGO_MANIFEST_DIR/platform.toml` of the crate
/// under test (read on first use). The SDK itself names no platform.
struct Known {
    platforms: Vec<Platform>,
    #[cfg(not(target_arch = "wasm32"))]
    looked_in_manifest_dir: bool,
    /// Why a `platform.toml` found at run time was refused (the checks report it).
    refused: Vec<String>,
}

struct Platform {
    id: &'static str,
    listed: &'static [(&'static str, Kind)],
}

static KNOWN: Mutex<Known> = Mutex::new(Known {
    platforms: Vec::new(),
    #[cfg(not(target_arch = "wasm32"))]
    looked_in_manifest_dir: false,
    refused: Vec::new(),
});

fn known() -> std::sync::MutexGuard<'static, Known> {
    KNOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Known {
    fn add(&mut self, id: &'static str, listed: &'static [(&'static str, Kind)]) {
        if !self.platforms.iter().any(|p| p.id == id) {
            self.platforms.push(Platform { id, listed });
        }
    }

    fn find(&mut self, platform: &str) -> Option<&Platform> {
        #[cfg(not(target_arch = "wasm32"))]
        if !self.looked_in_manifest_dir && !self.platforms.iter().any(|p| p.id == platform) {
            self.looked_in_manifest_dir = true;
            if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
                let path = std::path::Path::new(&dir).join("platform.toml");
                if path.is_file() {
                    match Manifest::load(&path) {
                        Ok(m) => {
                            let (id, listed) = leak(m);
                            self.add(id, listed);
                        }
                        Err(e) => self.refused.push(e.to_string()),
                    }
                }
            }
        }
        self.platforms.iter().find(|p| p.id == platform)
    }
}

/// Make a platform known to this process: tools and tests that run several
/// extractors natively register their `platform.toml`s. Leaked once per
/// platform (a process knows a handful).
#[cfg(not(target_arch = "wasm32"))]
pub fn register(manifest: Manifest) {
    let (id, listed) = leak(manifest);
    known().add(id, listed);
}

#[cfg(not(target_arch = "wasm32"))]
fn leak(manifest: Manifest) -> (&'static str, &'static [(&'static str, Kind)]) {
    let listed: Vec<(&'static str, Kind)> = manifest
        .members
        .into_iter()
        .map(|m| (&*String::leak(m.name), m.kind))
        .collect();
    (
        String::leak(manifest.id),
        Box::leak(listed.into_boxed_slice()),
    )
}

/// The component's own platform id and listed members, as
/// `export_extractor!` compiles them in from its `platform.toml`
/// (`mediaparse_catalogue_macros::embedded_platform!`).
#[doc(hidden)]
pub fn embed_platform((id, members): (&'static str, &'static [(&'static str, &'static str)])) {
    let mut known = known();
    if known.platforms.iter().any(|p| p.id == id) {
        return;
    }
    let listed: Vec<(&'static str, Kind)> = members
        .iter()
        .filter_map(|(name, kind)| Kind::from_name(kind).map(|k| (*name, k)))
        .collect();
    known.add(id, Box::leak(listed.into_boxed_slice()));
}

/// Listed stable members of `data.platformData` of `platform`, from its
/// `platform.toml` (empty for a platform this process does not know).
pub fn listed_members(platform: &str) -> &'static [(&'static str, Kind)] {
    known().find(platform).map_or(&[], |p| p.listed)
}

/// Problems with a platformData object against the listed members in the
/// platform's `platform.toml`; not knowing the platform is a problem too.
pub fn check_platform_data(platform: &str, data: &Value) -> Vec<String> {
    let mut known = known();
    match known.find(platform) {
        Some(p) => mediaparse_catalogue::check_members(p.listed.iter().copied(), data),
        None => {
            let mut problems = vec![format!(
                "no platform.toml for {platform:?} (registered, compiled in, or in $CARGO_MANIFEST_DIR)"
            )];
            problems.extend(known.refused.iter().cloned());
            problems
        }
    }
}

/// Fill listed members the fetched shape could not supply with the empty
/// value of their type (never invented data).
pub fn fill_missing_members(platform: &str, data: &mut serde_json::Map<String, Value>) {
    if let Some(p) = known().find(platform) {
        mediaparse_catalogue::fill_members(p.listed.iter().copied(), data);
    }
}

/// Whether `url` parses as an absolute http(s) URL with a host — the same
/// verdict as `url::Url::parse`, reached by parsing only the scheme and
/// authority when the text starts with `http://` or `https://`: for these
/// schemes the path, query and fragment are percent-encoded as needed and
/// never fail a parse, and media URLs are long (signed CDN queries), so
/// parsing them whole cost more than the rest of the checks.
pub fn is_http_url(url: &str) -> bool {
    let whole = parses_as_http_url;
    let scheme_len = if url
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("https://"))
    {
        8
    } else if url
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("http://"))
    {
        7
    } else {
        return whole(url);
    };
    // More slashes may follow the scheme's two; the authority starts after
    // them and ends at the first of these (WHATWG URL, special schemes).
    let start = url.len() - url[scheme_len..].trim_start_matches(['/', '\\']).len();
    let end = url[start..]
        .find(['/', '\\', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let head = &url[..end];
    // A parse trims controls and spaces from the ends of its text, so a
    // head that ends in one would be judged on less than the whole URL has.
    if head.bytes().any(|b| b <= b' ') {
        return whole(url);
    }
    whole(head)
}

/// The verdict of a whole parse: an absolute http(s) URL with a host.
fn parses_as_http_url(url: &str) -> bool {
    matches!(url::Url::parse(url), Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
}

/// The host's checks on an extractor's media (DESIGN.md §2 step 8):
/// absolute http(s) URLs everywhere, finite non-negative duration.
pub fn validate_media(media: &crate::Media) -> Result<(), String> {
    let check = |what: &str, i: usize, url: &str| -> Result<(), String> {
        if is_http_url(url) {
            Ok(())
        } else {
            Err(format!(
                "{what}[{i}].url is not an absolute http(s) URL: {url:?}"
            ))
        }
    };
    for (i, x) in media.images.iter().enumerate() {
        check("images", i, &x.url)?;
    }
    for (i, x) in media.videos.iter().enumerate() {
        check("videos", i, &x.url)?;
        // SPEC.md: a video's source is direct, adaptive, dash or live_photo.
        if x.source == crate::MediaSource::NativeVoice {
            return Err(format!("videos[{i}].source native_voice is audio-only"));
        }
    }
    for (i, x) in media.audios.iter().enumerate() {
        check("audios", i, &x.url)?;
        // SPEC.md: an audio's source is direct, adaptive, dash or native_voice.
        if x.source == crate::MediaSource::LivePhoto {
            return Err(format!("audios[{i}].source live_photo is video-only"));
        }
    }
    if !media.thumbnail.is_empty()
        && !is_http_url(&media.thumbnail)
        && url::Url::parse(&media.thumbnail).is_err()
    {
        return Err(format!("thumbnail is not a URL: {:?}", media.thumbnail));
    }
    if !media.duration.is_finite() || media.duration < 0.0 {
        return Err(format!(
            "duration is not a non-negative number: {}",
            media.duration
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{is_http_url, parses_as_http_url as whole};
    use proptest::prelude::*;

    #[test]
    fn the_short_verdict_is_the_whole_parse_on_edge_cases() {
        for url in [
            "https://v16.tiktokcdn.com/a/b.mp4?x=1&y=%zz&z=\u{e9}#frag",
            "HTTPS://Example.COM/x",
            "http://user:pw@host:8080/p?q",
            "http://host:99999/",
            "http://host:80a/",
            "https:///path",
            "https://",
            "http://?q",
            "http://#f",
            "http://[::1]/x",
            "http://[::1/x",
            "http://a b/x",
            "http://exa\tmple.com/x",
            "http://exa\nmple.com/x",
            "http://host\\path",
            "http://%41.com/",
            "http://%zz.com/",
            "http://xn--/",
            "http://1.2.3.4.5/",
            "http://0x7f.1/",
            "http://ho st/",
            "http://host/pa th/\u{0}/x",
            " https://lead.example/",
            "https://trail.example/ ",
            "ftp://host/x",
            "javascript:alert(1)",
            "//host/x",
            "",
        ] {
            assert_eq!(is_http_url(url), whole(url), "{url:?}");
        }
    }

    proptest! {
        #[test]
        fn the_short_verdict_is_the_whole_parse(
            scheme in "(?i)https?://|http:|https:/|ftp://|",
            authority in "[a-zA-Z0-9.:@\\[\\]%_~ \t\n\u{0}\u{ad}\u{e9}\u{3002}\u{ff0f}\u{1f600}-]{0,24}",
            rest in "[/?#\\\\a-z0-9%=& \u{e9}\u{0}-]{0,24}",
        ) {
            let url = format!("{scheme}{authority}{rest}");
            prop_assert_eq!(is_http_url(&url), whole(&url), "{:?}", url);
        }
    }
}
