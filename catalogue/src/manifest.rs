//! `platform.toml`: one platform's facts, parsed and checked.

use std::path::Path;

use serde::Deserialize;

use crate::Kind;

/// Everything the service knows about one platform besides its code.
///
/// ```toml
/// id = "tiktok"                 # the platform id: `[a-z][a-z0-9_]*`, at most 16 bytes
/// name = "TikTok"               # display name
/// price = 1                     # credits per successful parse (operator config may override)
/// order = 1                     # position in listings; absent: after every numbered one, by id
/// example_url = "https://…"     # a public post URL (OpenAPI examples)
/// media_hosts = ["*.tiktokcdn.com"]   # hosts of the media URLs it hands out
/// share_text = false            # accepts copied share text holding a URL
/// members = [{ name = "aweme_id", type = "string" }]   # listed platformData members
/// optional_members = [{ name = "x", type = "string", description = "…" }]
/// fetch_profile = "browser"     # how upstream requests leave (absent: "rustls"); see FETCH_PROFILES
///
/// [[canary]]                    # a post parsed on schedule to watch the platform (see Canary)
/// url = "https://…"
/// expect = { min_videos = 1 }
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The platform id, as the component's `info().platform` says it.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Default credits one successful parse costs.
    pub price: i64,
    /// Position in listings (capabilities, the OpenAPI document).
    #[serde(default)]
    pub order: Option<u32>,
    /// A public post URL the extractor parses (documentation examples).
    pub example_url: String,
    /// Hosts of the media URLs this platform hands out (`*.` prefix: any subdomain).
    #[serde(default)]
    pub media_hosts: Vec<String>,
    /// Does `detect` accept copied share text holding a URL (documented per platform)?
    #[serde(default)]
    pub share_text: bool,
    /// Listed, stable `platformData` members, in documentation order.
    #[serde(default)]
    pub members: Vec<Member>,
    /// Members present only in some answers (documented, never required).
    #[serde(default)]
    pub optional_members: Vec<OptionalMember>,
    /// The TLS/HTTP2 identity its upstream requests leave with, one of
    /// [`FETCH_PROFILES`]; absent means `"rustls"`. The operator's
    /// `[platforms.<id>] fetch_profile` overrides it.
    #[serde(default)]
    pub fetch_profile: Option<String>,
    /// Canary posts (`[[canary]]`): parsed on schedule when the operator
    /// runs canaries, to learn of a platform's change before callers do.
    #[serde(default, rename = "canary")]
    pub canaries: Vec<Canary>,
}

/// A canary post: a public URL of the platform and what a healthy answer holds.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    pub url: String,
    #[serde(default)]
    pub expect: CanaryExpect,
}

/// What a healthy answer to a canary holds: at least this many of each
/// kind; when every minimum is 0, at least one media item of any kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CanaryExpect {
    #[serde(default)]
    pub min_videos: u32,
    #[serde(default)]
    pub min_images: u32,
    #[serde(default)]
    pub min_audios: u32,
}

impl CanaryExpect {
    /// `None` when an answer with these counts is healthy; else what it lacks.
    pub fn unmet(&self, videos: usize, images: usize, audios: usize) -> Option<String> {
        let mut short = Vec::new();
        for (kind, want, got) in [
            ("videos", self.min_videos, videos),
            ("images", self.min_images, images),
            ("audios", self.min_audios, audios),
        ] {
            if got < want as usize {
                short.push(format!("{got} {kind}, at least {want} expected"));
            }
        }
        let none_asked = self.min_videos == 0 && self.min_images == 0 && self.min_audios == 0;
        if none_asked && videos + images + audios == 0 {
            short.push("no media, at least one expected".into());
        }
        (!short.is_empty()).then(|| short.join("; "))
    }
}

/// Accepted `fetch_profile` values: `"browser"` impersonates the browser
/// (or app) the extractor's User-Agent names; the others force one identity.
pub const FETCH_PROFILES: [&str; 6] =
    ["browser", "chrome", "safari", "firefox", "okhttp", "rustls"];

/// A listed `platformData` member.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: Kind,
}

/// A conditional `platformData` member.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionalMember {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: Kind,
    /// When it is present.
    pub description: String,
}

/// Why a `platform.toml` was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{}line {line}: {message}", origin(.path))]
    Syntax {
        path: Option<String>,
        line: usize,
        message: String,
    },
    #[error("{}{field}: {reason}", origin(.path))]
    Invalid {
        path: Option<String>,
        field: &'static str,
        reason: String,
    },
}

fn origin(path: &Option<String>) -> String {
    path.as_ref().map(|p| format!("{p}: ")).unwrap_or_default()
}

impl ManifestError {
    fn at(mut self, file: &Path) -> Self {
        let shown = Some(file.display().to_string());
        match &mut self {
            ManifestError::Syntax { path, .. } | ManifestError::Invalid { path, .. } => {
                *path = shown
            }
            ManifestError::Read { .. } => {}
        }
        self
    }
}

/// Longest platform id: the test guest's identity record and the metrics
/// labels are sized for it.
const MAX_ID_LEN: usize = 16;

/// Is `id` a syntactically valid platform id (`[a-z][a-z0-9_]*`, ≤ 16 bytes)?
///
/// ```
/// assert!(mediaparse_catalogue::is_platform_id("xiaohongshu"));
/// assert!(!mediaparse_catalogue::is_platform_id("../etc"));
/// ```
pub fn is_platform_id(id: &str) -> bool {
    let mut chars = id.chars();
    id.len() <= MAX_ID_LEN
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl Manifest {
    /// Parse and check a `platform.toml` text.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| ManifestError::Syntax {
            path: None,
            line: e.span().map_or(1, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            }),
            message: e.message().trim().to_string(),
        })?;
        manifest.check()?;
        Ok(manifest)
    }

    /// Read, parse and check a `platform.toml` file; errors name the file.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Manifest::parse(&text).map_err(|e| e.at(path))
    }

    fn check(&self) -> Result<(), ManifestError> {
        let invalid = |field, reason: String| {
            Err(ManifestError::Invalid {
                path: None,
                field,
                reason,
            })
        };
        for (i, canary) in self.canaries.iter().enumerate() {
            if !(canary.url.starts_with("https://") || canary.url.starts_with("http://")) {
                return invalid(
                    "canary",
                    format!("entry {} url is not an http or https URL", i + 1),
                );
            }
        }
        if let Some(profile) = &self.fetch_profile
            && !FETCH_PROFILES.contains(&profile.as_str())
        {
            return invalid(
                "fetch_profile",
                format!("{profile:?} is not one of {FETCH_PROFILES:?}"),
            );
        }
        if !is_platform_id(&self.id) {
            return invalid(
                "id",
                format!(
                    "{:?} is not a platform id ([a-z][a-z0-9_]*, at most {MAX_ID_LEN} bytes)",
                    self.id
                ),
            );
        }
        if self.name.trim().is_empty() {
            return invalid("name", "is empty".into());
        }
        if self.price < 0 {
            return invalid("price", format!("{} is negative", self.price));
        }
        let example_ok = url::Url::parse(&self.example_url)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        if !example_ok {
            return invalid(
                "example_url",
                format!("{:?} is not an absolute http(s) URL", self.example_url),
            );
        }
        for host in &self.media_hosts {
            let bare = host.strip_prefix("*.").unwrap_or(host);
            let ok = !bare.is_empty()
                && bare
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            if !ok {
                return invalid("media_hosts", format!("{host:?} is not a host name"));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        let names = self
            .members
            .iter()
            .map(|m| &m.name)
            .chain(self.optional_members.iter().map(|m| &m.name));
        for name in names {
            if name.is_empty() {
                return invalid("members", "a member has an empty name".into());
            }
            if !seen.insert(name) {
                return invalid("members", format!("`{name}` is listed twice"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        id = "demo"
        name = "Demo"
        price = 3
        order = 2
        example_url = "https://demo.example/p/1"
        media_hosts = ["*.cdn.demo.example", "img.demo.example"]
        share_text = true
        members = [{ name = "id", type = "string" }, { name = "n", type = "number" }]
        optional_members = [{ name = "u", type = "string", description = "Sometimes." }]
    "#;

    fn error(text: &str) -> String {
        Manifest::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_full_manifest_parses() {
        let m = Manifest::parse(GOOD).unwrap();
        assert_eq!((m.id.as_str(), m.price, m.order), ("demo", 3, Some(2)));
        assert_eq!(m.members[1].kind, Kind::Number);
        assert_eq!(m.optional_members[0].name, "u");
        assert_eq!(m.media_hosts.len(), 2);
        assert!(m.share_text);
        assert_eq!(m.fetch_profile, None);
        let m = Manifest::parse(&format!("{GOOD}\nfetch_profile = \"browser\"\n")).unwrap();
        assert_eq!(m.fetch_profile.as_deref(), Some("browser"));
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let text = GOOD.replace("price = 3", "price = three");
        assert!(error(&text).starts_with("line 4: "), "{}", error(&text));
    }

    #[test]
    fn unknown_fields_and_types_are_refused() {
        assert!(error(&format!("{GOOD}\nprise = 2\n")).contains("prise"));
        let text = GOOD.replace("type = \"number\"", "type = \"integer\"");
        assert!(error(&text).contains("integer"), "{}", error(&text));
    }

    #[test]
    fn bad_values_name_the_field() {
        let cases = [
            (GOOD.replace("\"demo\"", "\"De mo\""), "id: "),
            (
                GOOD.replace("price = 3", "price = -1"),
                "price: -1 is negative",
            ),
            (
                GOOD.replace("https://demo.example/p/1", "demo/p/1"),
                "example_url: ",
            ),
            (GOOD.replace("img.demo.example", "img/x"), "media_hosts: "),
            (
                GOOD.replace("name = \"n\"", "name = \"id\""),
                "members: `id` is listed twice",
            ),
            (
                GOOD.replace("name = \"Demo\"", "name = \" \""),
                "name: is empty",
            ),
            (
                format!("{GOOD}\nfetch_profile = \"edge\"\n"),
                "fetch_profile: \"edge\" is not one of",
            ),
        ];
        for (text, expected) in cases {
            assert!(
                error(&text).starts_with(expected),
                "{expected}: {}",
                error(&text)
            );
        }
    }

    #[test]
    fn load_names_the_file() {
        let dir = std::env::temp_dir().join(format!("catalogue-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("demo.toml");
        std::fs::write(&path, GOOD.replace("price = 3", "price = -1")).unwrap();
        let e = Manifest::load(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}: price", path.display())), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        let missing = Manifest::load(&path).unwrap_err().to_string();
        assert!(missing.starts_with("cannot read "), "{missing}");
    }

    #[test]
    fn platform_ids() {
        for ok in ["tiktok", "a", "x_2", "abcdefghijklmnop"] {
            assert!(is_platform_id(ok), "{ok}");
        }
        for bad in ["", "2x", "Tik", "a-b", "abcdefghijklmnopq", "a.b"] {
            assert!(!is_platform_id(bad), "{bad}");
        }
    }
}
