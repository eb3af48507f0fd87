//! Facts of SPEC.md that both the host and extractor tests check against:
//! the per-platform ones come from each extractor's `platform.toml`.

use std::sync::Mutex;

use serde_json::Value;

pub use mediaparse_catalogue::{Kind, Manifest};

/// The `platform.toml` of every platform this process knows: registered
/// ones, plus (parsed on first use) the text `export_extractor!` embeds in a
/// component and, natively, `$CARGO_MANIFEST_DIR/platform.toml` of the crate
/// under test. The SDK itself names no platform.
struct Known {
    manifests: Vec<Entry>,
    embedded: Option<&'static str>,
    embedded_taken: bool,
    looked_in_manifest_dir: bool,
    /// Why an embedded or found file was refused (reported by the checks).
    refused: Vec<String>,
}

struct Entry {
    manifest: &'static Manifest,
    listed: &'static [(&'static str, Kind)],
}

static KNOWN: Mutex<Known> = Mutex::new(Known {
    manifests: Vec::new(),
    embedded: None,
    embedded_taken: false,
    looked_in_manifest_dir: false,
    refused: Vec::new(),
});

fn known() -> std::sync::MutexGuard<'static, Known> {
    KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Known {
    /// Leaked once per platform: a process knows a handful.
    fn add(&mut self, manifest: Manifest) {
        if self.manifests.iter().any(|e| e.manifest.id == manifest.id) {
            return;
        }
        let manifest: &'static Manifest = Box::leak(Box::new(manifest));
        let listed: Vec<(&'static str, Kind)> = manifest
            .members
            .iter()
            .map(|m| (m.name.as_str(), m.kind))
            .collect();
        self.manifests.push(Entry {
            manifest,
            listed: Box::leak(listed.into_boxed_slice()),
        });
    }

    fn find(&mut self, platform: &str) -> Option<&Entry> {
        if let Some(text) = self.embedded.take() {
            self.embedded_taken = true;
            match Manifest::parse(text) {
                Ok(m) => self.add(m),
                Err(e) => self.refused.push(format!("embedded platform.toml: {e}")),
            }
        }
        // Natively only: a component's environment is the host's business.
        let native = cfg!(not(target_arch = "wasm32"));
        if native
            && !self.looked_in_manifest_dir
            && !self.manifests.iter().any(|e| e.manifest.id == platform)
        {
            self.looked_in_manifest_dir = true;
            if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
                let path = std::path::Path::new(&dir).join("platform.toml");
                if path.is_file() {
                    match Manifest::load(&path) {
                        Ok(m) => self.add(m),
                        Err(e) => self.refused.push(e.to_string()),
                    }
                }
            }
        }
        self.manifests.iter().find(|e| e.manifest.id == platform)
    }
}

/// Make a platform known to this process (tools and tests that run several
/// extractors natively register their `platform.toml`s).
pub fn register(manifest: Manifest) {
    known().add(manifest);
}

/// The component's own `platform.toml` text; `export_extractor!` passes it
/// (`include_str!` in the extractor crate). Parsed on first use.
#[doc(hidden)]
pub fn embed_platform_toml(text: &'static str) {
    let mut known = known();
    if !known.embedded_taken {
        known.embedded.get_or_insert(text);
    }
}

/// The `platform.toml` of `platform`, if this process knows it.
pub fn manifest(platform: &str) -> Option<&'static Manifest> {
    known().find(platform).map(|e| e.manifest)
}

/// Listed stable members of `data.platformData` of `platform`, from its
/// `platform.toml` (empty for a platform this process does not know).
pub fn listed_members(platform: &str) -> &'static [(&'static str, Kind)] {
    known().find(platform).map_or(&[], |e| e.listed)
}

/// Problems with a platformData object against the listed members in the
/// platform's `platform.toml`; not knowing the platform is a problem too.
pub fn check_platform_data(platform: &str, data: &Value) -> Vec<String> {
    let mut known = known();
    match known.find(platform) {
        Some(e) => e.manifest.check_platform_data(data),
        None => {
            let mut problems = vec![format!(
                "no platform.toml for {platform:?} (registered, embedded or in $CARGO_MANIFEST_DIR)"
            )];
            problems.extend(known.refused.iter().cloned());
            problems
        }
    }
}

/// Fill listed members the fetched shape could not supply with the empty
/// value of their type (never invented data).
pub fn fill_missing_members(platform: &str, data: &mut serde_json::Map<String, Value>) {
    if let Some(e) = known().find(platform) {
        e.manifest.fill_missing_members(data);
    }
}

/// The host's checks on an extractor's media (DESIGN.md §2 step 8):
/// absolute http(s) URLs everywhere, finite non-negative duration.
pub fn validate_media(media: &crate::Media) -> Result<(), String> {
    let check = |what: &str, i: usize, url: &str| -> Result<(), String> {
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
            _ => Err(format!(
                "{what}[{i}].url is not an absolute http(s) URL: {url:?}"
            )),
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
    if !media.thumbnail.is_empty() && url::Url::parse(&media.thumbnail).is_err() {
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
