//! Media delivery through the service: with `delivery=tunnel`
//! every media URL of a parse answer is replaced by
//! `{public_base_url}/api/v1/tunnel/{token}`, a sealed capability
//! ([`token`]) that the tunnel endpoint opens to fetch the media from the
//! platform's CDN with the headers, cookie and exit the parse used.
//!
//! Below `http`, above `fetch`: it never names the HTTP state. This crate
//! names nothing of the host above it but its lower crates (`core`,
//! `metrics`, `store`, `fetch`, `registry`, `config`, `auth`).

pub mod expiry;
pub mod limits;
pub mod media_type;
pub mod merge;
pub mod revoked;
pub mod stream;
pub mod token;

use std::sync::Arc;
use std::time::Duration;

use mediaparse_sdk::{Header, Media};

pub use token::{Claims, KeySpecError, Keyring, TokenError};

pub use mediaparse_core::Delivery;

/// The tunnel's configuration and its media fetcher.
pub struct TunnelSettings {
    /// Where callers reach this service (`--public-base-url`), without a trailing slash.
    pub public_base_url: String,
    /// Longest life of a token (the media URL's own expiry may cut it shorter).
    pub ttl: Duration,
    pub keys: Keyring,
    /// Fetches media (guard, media-host list, upstream override).
    pub fetcher: Arc<mediaparse_fetch::Fetcher>,
    /// Per-key and per-platform limits, and the byte counts.
    pub meter: Arc<limits::Meter>,
    /// `ffmpeg` for `/api/v1/tunnel/merge`, and its bounds.
    pub merge: merge::MergeSettings,
}

/// Who a tunnelled URL is issued to, and how the parse reached the platform.
#[derive(Clone, Debug)]
pub struct Grant {
    pub platform: String,
    pub account: String,
    pub key_id: String,
    /// The key's `rotated_at` and token display prefix now: a reset changes
    /// them, which revokes the tokens issued before it.
    pub key_rotated_at: Option<i64>,
    pub key_token_prefix: String,
    /// The exit/session label the parse used, if any.
    pub egress: Option<String>,
    /// Unix seconds.
    pub now: i64,
}

impl TunnelSettings {
    /// The URL a caller fetches `claims` from.
    pub fn url_for(&self, claims: &Claims) -> String {
        format!(
            "{}/api/v1/tunnel/{}",
            self.public_base_url,
            self.keys.seal(claims)
        )
    }

    fn tunnel(&self, grant: &Grant, url: &mut String, headers: Vec<Header>) {
        let ttl_end = grant
            .now
            .saturating_add(i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX));
        let expires_at = expiry::url_expiry(url).map_or(ttl_end, |e| e.min(ttl_end));
        let claims = Claims {
            url: std::mem::take(url),
            headers: headers.into_iter().map(|h| (h.name, h.value)).collect(),
            egress: grant.egress.clone(),
            platform: grant.platform.clone(),
            account: grant.account.clone(),
            key_id: grant.key_id.clone(),
            key_rotated_at: grant.key_rotated_at,
            key_token_prefix: Some(grant.key_token_prefix.clone()),
            expires_at,
        };
        *url = self.url_for(&claims);
    }

    /// Replace every media URL (images, videos, audios, thumbnail) by a
    /// tunnel URL; `headers` become empty (the tunnel sends them).
    pub fn deliver(&self, grant: &Grant, media: &mut Media) {
        if !media.thumbnail.is_empty() {
            self.tunnel(grant, &mut media.thumbnail, Vec::new());
        }
        for image in &mut media.images {
            self.tunnel(grant, &mut image.url, Vec::new());
        }
        for video in &mut media.videos {
            let headers = std::mem::take(&mut video.headers);
            self.tunnel(grant, &mut video.url, headers);
        }
        for audio in &mut media.audios {
            let headers = std::mem::take(&mut audio.headers);
            self.tunnel(grant, &mut audio.url, headers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::{Image, Video};

    #[test]
    fn deliver_rewrites_every_url_and_empties_headers() {
        let dir = tempfile::tempdir().unwrap();
        let store = mediaparse_store::Store::open(&dir.path().join("t.db")).unwrap();
        let settings = TunnelSettings {
            public_base_url: "https://mp.example".into(),
            ttl: Duration::from_secs(3600),
            keys: Keyring::random(),
            fetcher: Arc::new(
                mediaparse_fetch::Fetcher::new(None, mediaparse_fetch::FetchLimits::default())
                    .unwrap(),
            ),
            meter: limits::Meter::new(Default::default(), store),
            merge: merge::MergeSettings::unavailable(),
        };
        let mut media = Media {
            thumbnail: "https://cdn.example/t.jpg".into(),
            images: vec![Image {
                url: "https://cdn.example/i.jpg".into(),
                width: 1,
                height: 1,
            }],
            videos: vec![Video::mp4(
                "https://cdn.example/v.mp4?x-expires=1000000600",
                "720p",
                (1, 1),
                vec![Header::new("referer", "https://platform.example/")],
            )],
            ..Media::default()
        };
        let grant = Grant {
            platform: "tiktok".into(),
            account: "a".into(),
            key_id: "k".into(),
            key_rotated_at: None,
            key_token_prefix: "mp_live_ab".into(),
            egress: None,
            now: 1_000_000_000,
        };
        settings.deliver(&grant, &mut media);
        let prefix = "https://mp.example/api/v1/tunnel/";
        for url in [&media.thumbnail, &media.images[0].url, &media.videos[0].url] {
            assert!(url.starts_with(prefix), "{url}");
            assert!(!url.contains("cdn.example"));
        }
        assert!(media.videos[0].headers.is_empty());
        let video = settings
            .keys
            .open(&media.videos[0].url[prefix.len()..], grant.now)
            .unwrap();
        assert_eq!(video.url, "https://cdn.example/v.mp4?x-expires=1000000600");
        assert_eq!(
            video.expires_at, 1_000_000_600,
            "the URL's own expiry is sooner than the TTL"
        );
        assert_eq!(
            video.headers,
            vec![("referer".into(), "https://platform.example/".into())]
        );
        let image = settings
            .keys
            .open(&media.images[0].url[prefix.len()..], grant.now)
            .unwrap();
        assert_eq!(image.expires_at, 1_000_003_600);
    }
}
