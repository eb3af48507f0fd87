//! The media types the tunnel serves as they are: its answers come from
//! the service's own origin (the one `/console` lives on), so an upstream
//! that answers HTML or SVG must never have it rendered there. Video, audio,
//! raster images and `application/octet-stream` pass (type and subtype only,
//! parameters dropped); anything else — `text/html`, `image/svg+xml`, XML,
//! JavaScript, a malformed value — is served as `application/octet-stream`
//! with `Content-Disposition: attachment`. Every tunnel answer also carries
//! [`SECURITY_HEADERS`], so even a mislabelled body is never sniffed or run.

/// Headers on every tunnel answer: no MIME sniffing, and a sandbox that
/// keeps any document from running script or reaching the origin.
pub const SECURITY_HEADERS: [(&str, &str); 2] = [
    ("x-content-type-options", "nosniff"),
    ("content-security-policy", "sandbox"),
];

/// The type everything outside the allow-list is served as.
pub const FALLBACK: &str = "application/octet-stream";

/// How one upstream `Content-Type` is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    pub content_type: String,
    /// Served as a download (`Content-Disposition: attachment`).
    pub attachment: bool,
}

/// The `Content-Type` (and whether to force a download) for an upstream's
/// `upstream` value (`None`: the upstream sent none).
pub fn serve_as(upstream: Option<&str>) -> Served {
    let Some(value) = upstream else {
        return Served {
            content_type: FALLBACK.into(),
            attachment: false,
        };
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if allowed(&essence) {
        Served {
            content_type: essence,
            attachment: false,
        }
    } else {
        Served {
            content_type: FALLBACK.into(),
            attachment: true,
        }
    }
}

/// Whether `essence` (lowercase `type/subtype`) is served as it is.
fn allowed(essence: &str) -> bool {
    if essence == FALLBACK {
        return true;
    }
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    if !token(subtype) {
        return false;
    }
    match kind {
        "video" | "audio" => true,
        // SVG (and any XML-based image) is a document that can run script.
        "image" => !subtype.contains("svg") && !subtype.contains("xml"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_passes_and_documents_become_downloads() {
        for (upstream, served) in [
            ("video/mp4", "video/mp4"),
            ("Video/MP4; codecs=\"avc1\"", "video/mp4"),
            ("audio/mp4", "audio/mp4"),
            ("image/jpeg", "image/jpeg"),
            ("image/webp", "image/webp"),
            ("application/octet-stream", "application/octet-stream"),
        ] {
            assert_eq!(
                serve_as(Some(upstream)),
                Served {
                    content_type: served.into(),
                    attachment: false
                },
                "{upstream}"
            );
        }
        for upstream in [
            "text/html",
            "text/html; charset=utf-8",
            "image/svg+xml",
            "IMAGE/SVG+XML",
            "application/xhtml+xml",
            "text/xml",
            "application/javascript",
            "multipart/x-mixed-replace; boundary=x",
            "video",
            "video/",
            "video/mp4 text/html",
            "",
        ] {
            assert_eq!(
                serve_as(Some(upstream)),
                Served {
                    content_type: FALLBACK.into(),
                    attachment: true
                },
                "{upstream}"
            );
        }
        assert_eq!(serve_as(None).content_type, FALLBACK);
    }
}
