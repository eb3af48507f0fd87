//! The component glue: wit-bindgen's generated bindings and conversions
//! between them and the SDK's plain types. Used by `export_extractor!`.

#![allow(missing_docs)] // generated glue, hidden from the docs

use crate::{Extractor, types as t};

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "extractor",
        pub_export_macro: true,
        export_macro_name: "__export_extractor_world",
        default_bindings_module: "mediaparse_sdk::guest::bindings",
    });
}

use bindings::mediaparse::extractor::types as w;

fn header_in(h: w::Header) -> t::Header {
    t::Header {
        name: h.name,
        value: h.value,
    }
}

fn header_out(h: t::Header) -> w::Header {
    w::Header {
        name: h.name,
        value: h.value,
    }
}

fn target_in(x: w::Target) -> t::Target {
    t::Target {
        platform: x.platform,
        id: x.id,
        canonical_url: x.canonical_url,
        input: x.input,
    }
}

fn target_out(x: t::Target) -> w::Target {
    w::Target {
        platform: x.platform,
        id: x.id,
        canonical_url: x.canonical_url,
        input: x.input,
    }
}

fn context_in(x: w::Context) -> t::Context {
    t::Context {
        now_unix_ms: x.now_unix_ms,
        config: x.config.into_iter().map(header_in).collect(),
        remembered: x.remembered.into_iter().map(header_in).collect(),
    }
}

fn request_in(r: w::HttpRequest) -> t::HttpRequest {
    t::HttpRequest {
        method: r.method,
        url: r.url,
        headers: r.headers.into_iter().map(header_in).collect(),
        body: r.body,
        follow_redirects: r.follow_redirects,
        cache_ttl_seconds: r.cache_ttl_seconds,
    }
}

fn request_out(r: t::HttpRequest) -> w::HttpRequest {
    w::HttpRequest {
        method: r.method,
        url: r.url,
        headers: r.headers.into_iter().map(header_out).collect(),
        body: r.body,
        follow_redirects: r.follow_redirects,
        cache_ttl_seconds: r.cache_ttl_seconds,
    }
}

fn exchange_in(e: w::Exchange) -> t::Exchange {
    let r = e.response;
    t::Exchange {
        request: request_in(e.request),
        response: t::HttpResponse {
            request_url: r.request_url,
            final_url: r.final_url,
            status: r.status,
            headers: r.headers.into_iter().map(header_in).collect(),
            body: r.body,
        },
    }
}

fn source_out(s: t::MediaSource) -> w::MediaSource {
    match s {
        t::MediaSource::Direct => w::MediaSource::Direct,
        t::MediaSource::Adaptive => w::MediaSource::Adaptive,
        t::MediaSource::Dash => w::MediaSource::Dash,
        t::MediaSource::LivePhoto => w::MediaSource::LivePhoto,
        t::MediaSource::NativeVoice => w::MediaSource::NativeVoice,
    }
}

fn media_out(m: t::Media) -> w::Media {
    w::Media {
        title: m.title,
        thumbnail: m.thumbnail,
        duration: m.duration,
        images: m
            .images
            .into_iter()
            .map(|i| w::Image {
                url: i.url,
                width: i.width,
                height: i.height,
            })
            .collect(),
        videos: m
            .videos
            .into_iter()
            .map(|v| w::Video {
                url: v.url,
                quality: v.quality,
                mime_type: v.mime_type,
                width: v.width,
                height: v.height,
                has_audio: v.has_audio,
                source: source_out(v.source),
                headers: v.headers.into_iter().map(header_out).collect(),
            })
            .collect(),
        audios: m
            .audios
            .into_iter()
            .map(|a| w::Audio {
                url: a.url,
                quality: a.quality,
                mime_type: a.mime_type,
                bitrate: a.bitrate,
                source: source_out(a.source),
                headers: a.headers.into_iter().map(header_out).collect(),
            })
            .collect(),
    }
}

fn failure_out(f: t::Failure) -> w::Failure {
    match f {
        t::Failure::UnsupportedUrl(m) => w::Failure::UnsupportedUrl(m),
        t::Failure::Unavailable(m) => w::Failure::Unavailable(m),
        t::Failure::LoginRequired(m) => w::Failure::LoginRequired(m),
        t::Failure::RateLimited(m) => w::Failure::RateLimited(m),
        t::Failure::UpstreamChanged(m) => w::Failure::UpstreamChanged(m),
        t::Failure::UpstreamError(m) => w::Failure::UpstreamError(m),
    }
}

pub fn info<E: Extractor>() -> w::Info {
    let i = E::info();
    w::Info {
        platform: i.platform,
        version: i.version,
        url_hosts: i.url_hosts,
        api_hosts: i.api_hosts,
        url_shapes: i.url_shapes,
    }
}

pub fn detect<E: Extractor>(input: String) -> Result<w::Target, w::Failure> {
    E::detect(&input).map(target_out).map_err(failure_out)
}

pub fn plan<E: Extractor>(
    target: w::Target,
    ctx: w::Context,
    done: Vec<w::Exchange>,
) -> Result<w::Plan, w::Failure> {
    let done: Vec<t::Exchange> = done.into_iter().map(exchange_in).collect();
    match E::plan(&target_in(target), &context_in(ctx), &done) {
        Ok(t::Plan::Ready) => Ok(w::Plan::Ready),
        Ok(t::Plan::Fetch(reqs)) => Ok(w::Plan::Fetch(reqs.into_iter().map(request_out).collect())),
        Err(f) => Err(failure_out(f)),
    }
}

fn extraction_out(x: t::Extraction) -> w::Extraction {
    w::Extraction {
        media: media_out(x.media),
        platform_data: x.platform_data.into_string(),
    }
}

pub fn step<E: Extractor>(
    target: w::Target,
    ctx: w::Context,
    done: Vec<w::Exchange>,
) -> Result<w::Stepped, w::Failure> {
    let done: Vec<t::Exchange> = done.into_iter().map(exchange_in).collect();
    let stepped = E::stepped(&target_in(target), &context_in(ctx), &done).map_err(failure_out)?;
    Ok(w::Stepped {
        next: match stepped.next {
            crate::Step::Fetch(reqs) => w::Step::Fetch(reqs.into_iter().map(request_out).collect()),
            crate::Step::Done(x) => w::Step::Done(extraction_out(x)),
        },
        remember: stepped
            .remember
            .into_iter()
            .map(|m| w::Memo {
                key: m.key,
                value: m.value,
                ttl_seconds: m.ttl_seconds,
            })
            .collect(),
    })
}

pub fn map<E: Extractor>(
    target: w::Target,
    ctx: w::Context,
    done: Vec<w::Exchange>,
) -> Result<w::Extraction, w::Failure> {
    let done: Vec<t::Exchange> = done.into_iter().map(exchange_in).collect();
    let extraction = E::map(&target_in(target), &context_in(ctx), &done).map_err(failure_out)?;
    Ok(extraction_out(extraction))
}
