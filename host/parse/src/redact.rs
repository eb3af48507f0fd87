//! Configured secrets never leave in a result.

use mediaparse_sdk as sdk;

use mediaparse_core::Secrets;

/// Scrub configured secrets from every string a caller would receive.
pub(super) fn redact_media(secrets: &Secrets, media: &mut sdk::Media) {
    if secrets.is_empty() {
        return;
    }
    let headers = |hs: &mut Vec<sdk::Header>| {
        for h in hs {
            secrets.redact_in_place(&mut h.name);
            secrets.redact_in_place(&mut h.value);
        }
    };
    secrets.redact_in_place(&mut media.title);
    secrets.redact_in_place(&mut media.thumbnail);
    for i in &mut media.images {
        secrets.redact_in_place(&mut i.url);
    }
    for v in &mut media.videos {
        for s in [&mut v.url, &mut v.quality, &mut v.mime_type] {
            secrets.redact_in_place(s);
        }
        headers(&mut v.headers);
    }
    for a in &mut media.audios {
        for s in [&mut a.url, &mut a.quality, &mut a.mime_type] {
            secrets.redact_in_place(s);
        }
        headers(&mut a.headers);
    }
}
