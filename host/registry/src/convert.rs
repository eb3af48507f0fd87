//! Between wasmtime's generated WIT types and the SDK's plain types: the
//! same conversions for each WIT version's bindings ([`v1_1`], [`v1_0`]),
//! which differ only where the WIT does (`context`, `step`).

/// The conversions shared by every WIT 1.x version, expanded where `w`
/// names that version's generated `types` module.
macro_rules! conversions {
    () => {
        fn header_in(h: w::Header) -> sdk::Header {
            sdk::Header {
                name: h.name,
                value: h.value,
            }
        }

        fn header_out(h: &sdk::Header) -> w::Header {
            w::Header {
                name: h.name.clone(),
                value: h.value.clone(),
            }
        }

        pub fn info(i: w::Info) -> sdk::Info {
            sdk::Info {
                platform: i.platform,
                version: i.version,
                url_hosts: i.url_hosts,
                api_hosts: i.api_hosts,
                url_shapes: i.url_shapes,
            }
        }

        pub fn target_in(t: w::Target) -> sdk::Target {
            sdk::Target {
                platform: t.platform,
                id: t.id,
                canonical_url: t.canonical_url,
                input: t.input,
            }
        }

        pub fn target_out(t: &sdk::Target) -> w::Target {
            w::Target {
                platform: t.platform.clone(),
                id: t.id.clone(),
                canonical_url: t.canonical_url.clone(),
                input: t.input.clone(),
            }
        }

        fn request_in(r: w::HttpRequest) -> sdk::HttpRequest {
            sdk::HttpRequest {
                method: r.method,
                url: r.url,
                headers: r.headers.into_iter().map(header_in).collect(),
                body: r.body,
                follow_redirects: r.follow_redirects,
                cache_ttl_seconds: r.cache_ttl_seconds,
            }
        }

        fn request_out(r: &sdk::HttpRequest) -> w::HttpRequest {
            w::HttpRequest {
                method: r.method.clone(),
                url: r.url.clone(),
                headers: r.headers.iter().map(header_out).collect(),
                body: r.body.clone(),
                follow_redirects: r.follow_redirects,
                cache_ttl_seconds: r.cache_ttl_seconds,
            }
        }

        pub fn exchanges_out(done: &[sdk::Exchange]) -> Vec<w::Exchange> {
            done.iter()
                .map(|e| w::Exchange {
                    request: request_out(&e.request),
                    response: w::HttpResponse {
                        request_url: e.response.request_url.clone(),
                        final_url: e.response.final_url.clone(),
                        status: e.response.status,
                        headers: e.response.headers.iter().map(header_out).collect(),
                        body: e.response.body.clone(),
                    },
                })
                .collect()
        }

        pub fn plan_in(p: w::Plan) -> sdk::Plan {
            match p {
                w::Plan::Ready => sdk::Plan::Ready,
                w::Plan::Fetch(reqs) => {
                    sdk::Plan::Fetch(reqs.into_iter().map(request_in).collect())
                }
            }
        }

        pub fn failure_in(f: w::Failure) -> sdk::Failure {
            match f {
                w::Failure::UnsupportedUrl(m) => sdk::Failure::UnsupportedUrl(m),
                w::Failure::Unavailable(m) => sdk::Failure::Unavailable(m),
                w::Failure::LoginRequired(m) => sdk::Failure::LoginRequired(m),
                w::Failure::RateLimited(m) => sdk::Failure::RateLimited(m),
                w::Failure::UpstreamChanged(m) => sdk::Failure::UpstreamChanged(m),
                w::Failure::UpstreamError(m) => sdk::Failure::UpstreamError(m),
            }
        }

        fn source_in(s: w::MediaSource) -> sdk::MediaSource {
            match s {
                w::MediaSource::Direct => sdk::MediaSource::Direct,
                w::MediaSource::Adaptive => sdk::MediaSource::Adaptive,
                w::MediaSource::Dash => sdk::MediaSource::Dash,
                w::MediaSource::LivePhoto => sdk::MediaSource::LivePhoto,
                w::MediaSource::NativeVoice => sdk::MediaSource::NativeVoice,
            }
        }

        pub fn media_in(m: w::Media) -> sdk::Media {
            sdk::Media {
                title: m.title,
                thumbnail: m.thumbnail,
                duration: m.duration,
                images: m
                    .images
                    .into_iter()
                    .map(|i| sdk::Image {
                        url: i.url,
                        width: i.width,
                        height: i.height,
                    })
                    .collect(),
                videos: m
                    .videos
                    .into_iter()
                    .map(|v| sdk::Video {
                        url: v.url,
                        quality: v.quality,
                        mime_type: v.mime_type,
                        width: v.width,
                        height: v.height,
                        has_audio: v.has_audio,
                        source: source_in(v.source),
                        headers: v.headers.into_iter().map(header_in).collect(),
                    })
                    .collect(),
                audios: m
                    .audios
                    .into_iter()
                    .map(|a| sdk::Audio {
                        url: a.url,
                        quality: a.quality,
                        mime_type: a.mime_type,
                        bitrate: a.bitrate,
                        source: source_in(a.source),
                        headers: a.headers.into_iter().map(header_in).collect(),
                    })
                    .collect(),
            }
        }
    };
}

/// `mediaparse:extractor@1.1.0`.
pub mod v1_1 {
    use super::super::runtime::bindings::mediaparse::extractor::types as w;
    use mediaparse_sdk as sdk;

    conversions!();

    pub fn context_out(c: &sdk::Context) -> w::Context {
        w::Context {
            now_unix_ms: c.now_unix_ms,
            config: c.config.iter().map(header_out).collect(),
            remembered: c.remembered.iter().map(header_out).collect(),
        }
    }

    pub fn extraction_in(x: w::Extraction) -> (sdk::Media, String) {
        (media_in(x.media), x.platform_data)
    }

    pub fn step_in(s: w::Step) -> super::super::runtime::Next {
        use super::super::runtime::Next;
        match s {
            w::Step::Fetch(reqs) => Next::Fetch(reqs.into_iter().map(request_in).collect()),
            w::Step::Done(x) => {
                let (media, data) = extraction_in(x);
                Next::Done(media, data)
            }
        }
    }

    pub fn memo_in(m: w::Memo) -> sdk::Memo {
        sdk::Memo {
            key: m.key,
            value: m.value,
            ttl_seconds: m.ttl_seconds,
        }
    }
}

/// The frozen `mediaparse:extractor@1.0.0`: no remembered values.
pub mod v1_0 {
    use super::super::runtime::bindings_1_0::mediaparse::extractor::types as w;
    use mediaparse_sdk as sdk;

    conversions!();

    pub fn context_out(c: &sdk::Context) -> w::Context {
        w::Context {
            now_unix_ms: c.now_unix_ms,
            config: c.config.iter().map(header_out).collect(),
        }
    }
}
