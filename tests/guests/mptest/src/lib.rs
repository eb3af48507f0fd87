//! A test extractor that does whatever its input URL asks, for the tests of
//! the sandbox, hot reload and shutdown. It is built to
//! `target/test-guests/mptest.wasm` by `cargo xtask test` and never bundled.
//!
//! Its platform id and version are not compiled in: they are read from
//! [`IDENT`], a fixed-width record in the data section that the tests
//! byte-patch (`tests/src/guest.rs`), so one build yields a component for
//! any platform and any number of versions.
//!
//! Input `https://{platform}.mptest.example/{mode}`; modes:
//! - `ok`, `slow`: fetch `https://api.mptest.example/{mode}`, then one image
//!   (title `mptest {version}`, platform data echoing the version and body);
//! - `loop`: spin forever in `plan`; `oom`: allocate until the cap; `trap`: panic;
//! - `host`: plan a request to a host it did not declare;
//! - `big`: `map` returns ~100 MB of platform data;
//! - `badurl`: a video URL that is not an absolute http(s) URL;
//! - `badenum`: a video whose source is `native-voice` (audio-only in SPEC.md);
//! - `empty`: no media at all (SPEC's `304`);
//! - `deep`: platform data nested deeper than the host reads JSON;
//! - `leak`: echo every `context.config` value into the log, the media
//!   headers and the platform data; `leakerr`: into a failure message;
//! - `remember`: like `ok`, and remembers `seen` = how many values it was
//!   handed (platform data `remembered` lists them);
//! - `sealed`: platform data reports what WASI's clocks and random sources
//!   answer (`wasi` member; empty in a native build);
//! - `fanout-{n}-{r}`: for `r` rounds ask for `n` requests each
//!   (`https://api.mptest.example/fanout/{round}/{i}`), then finish; for the
//!   tests of the parse's round and request limits.

use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Header, HttpRequest, Image, Info, Media,
    MediaSource, Memo, Plan, Result, Step, Stepped, Target, Video, log, serde_json::json,
    urls::InputUrl,
};

/// `MPTEST-IDENT:` then the platform (16 bytes) and the version (16
/// bytes), each padded with spaces. Patched by the tests.
pub static IDENT: [u8; 45] = *b"MPTEST-IDENT:tiktok          1.0.0           ";

fn ident() -> (String, String) {
    // Read through an opaque pointer so the optimizer keeps the bytes in memory.
    let bytes: &[u8; 45] = core::hint::black_box(&IDENT);
    let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&bytes[r]).trim().to_string();
    (field(13..29), field(29..45))
}

pub const API: &str = "api.mptest.example";

/// The extractor; public so a native build (no export) keeps it.
pub struct MpTest;

fn mode(target: &Target) -> &str {
    target.id.as_str()
}

impl Extractor for MpTest {
    fn info() -> Info {
        let (platform, version) = ident();
        Info {
            url_hosts: vec![format!("{platform}.mptest.example")],
            platform,
            version,
            api_hosts: vec![API.into()],
            url_shapes: vec!["/{mode}".into()],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let url = InputUrl::parse(input)?;
        let mode = url
            .segments
            .first()
            .cloned()
            .ok_or_else(|| Failure::unsupported("no mode"))?;
        Ok(Target {
            platform: ident().0,
            id: mode,
            canonical_url: url.url.to_string(),
            input: input.into(),
        })
    }

    fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
        Ok(match plan(target, done)? {
            Plan::Fetch(requests) => Step::Fetch(requests),
            Plan::Ready => Step::Done(map(target, ctx, done)?),
        })
    }

    /// `remember`: fetch once, then finish asking the host to remember how
    /// many values it was handed (`seen`) and echo them in the platform data.
    fn stepped(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Stepped> {
        let next = Self::step(target, ctx, done)?;
        let remember = if mode(target) == "remember" && matches!(next, Step::Done(_)) {
            vec![Memo {
                key: "seen".into(),
                value: ctx.remembered.len().to_string(),
                ttl_seconds: 3600,
            }]
        } else {
            Vec::new()
        };
        Ok(Stepped { next, remember })
    }
}

fn plan(target: &Target, done: &[Exchange]) -> Result<Plan> {
    match mode(target) {
        "loop" => {
            let mut n: u64 = 0;
            loop {
                n = core::hint::black_box(n.wrapping_add(1));
            }
        }
        "oom" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                // Reserve without writing: grows linear memory fast.
                hoard.push(Vec::<u8>::with_capacity(1 << 20));
                core::hint::black_box(&hoard);
            }
        }
        "trap" => panic!("mptest: trap on request"),
        "host" => Ok(Plan::Fetch(vec![HttpRequest::get(
            "https://undeclared.example/steal",
        )])),
        m if m.starts_with("fanout-") => fanout(m, done),
        "ok" | "slow" | "remember" if done.is_empty() => Ok(Plan::Fetch(vec![HttpRequest::get(
            format!("https://{API}/{}", mode(target)),
        )])),
        _ => Ok(Plan::Ready),
    }
}

/// `fanout-{n}-{r}`: the next round's `n` requests, or ready after `r` rounds
/// (`done` holds `n` answers per round so far).
fn fanout(mode: &str, done: &[Exchange]) -> Result<Plan> {
    let mut parts = mode.trim_start_matches("fanout-").splitn(2, '-');
    let mut number = || -> Result<usize> {
        parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| Failure::unsupported("fanout-{n}-{r}"))
    };
    let (n, rounds) = (number()?, number()?);
    let round = done.len().checked_div(n).unwrap_or(rounds);
    if round >= rounds {
        return Ok(Plan::Ready);
    }
    Ok(Plan::Fetch(
        (0..n)
            .map(|i| HttpRequest::get(format!("https://{API}/fanout/{round}/{i}")))
            .collect(),
    ))
}

fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
    let (platform, version) = ident();
    let image = |url: &str| Image {
        url: url.into(),
        width: 1,
        height: 1,
    };
    let video = |url: &str, source: MediaSource, headers: Vec<Header>| Video {
        url: url.into(),
        quality: "hd".into(),
        mime_type: "video/mp4".into(),
        width: 1,
        height: 1,
        has_audio: true,
        source,
        headers,
    };
    let mut media = Media {
        title: format!("mptest {version}"),
        thumbnail: String::new(),
        duration: 0.0,
        images: vec![image(&format!(
            "https://cdn.mptest.example/{platform}/{}.jpg",
            mode(target)
        ))],
        videos: Vec::new(),
        audios: Vec::new(),
    };
    let mut data = json!({"platform": platform, "version": version, "mode": mode(target)});
    match mode(target) {
        "empty" => media.images.clear(),
        "deep" => {
            let mut nested = json!(1);
            for _ in 0..200 {
                nested = json!([nested]);
            }
            data["deep"] = nested;
        }
        "big" => {
            data["blob"] = json!("x".repeat(100 << 20));
        }
        "badurl" => {
            media
                .videos
                .push(video("javascript:alert(1)", MediaSource::Direct, vec![]));
        }
        "badenum" => {
            media.videos.push(video(
                "https://cdn.mptest.example/v.mp4",
                MediaSource::NativeVoice,
                vec![],
            ));
        }
        "leak" => {
            let values: Vec<String> = ctx.config.iter().map(|h| h.value.clone()).collect();
            for v in &values {
                log::warn(&format!("mptest leaking {v}"));
            }
            media.videos.push(video(
                "https://cdn.mptest.example/v.mp4",
                MediaSource::Direct,
                values
                    .iter()
                    .map(|v| Header::new("Cookie", v.clone()))
                    .collect(),
            ));
            data["echo"] = json!(values);
            data["note"] = json!(format!("config was {}", values.join(" | ")));
        }
        "sealed" => {
            data["wasi"] = wasi_readings();
        }
        "remember" => {
            let remembered: Vec<[&str; 2]> = ctx
                .remembered
                .iter()
                .map(|h| [h.name.as_str(), h.value.as_str()])
                .collect();
            data["remembered"] = json!(remembered);
        }
        "leakerr" => {
            let values: Vec<String> = ctx.config.iter().map(|h| h.value.clone()).collect();
            return Err(Failure::UpstreamError(format!(
                "upstream refused cookie {}",
                values.join(" | ")
            )));
        }
        _ => {
            if let Some(ex) = done.first() {
                data["body"] = json!(ex.response.text());
            }
        }
    }
    Ok(Extraction {
        media,
        platform_data: data.into(),
    })
}

/// Every clock and random source WASI offers, read once each (numbers as
/// strings: JSON readers need not hold 64 bits).
#[cfg(target_arch = "wasm32")]
fn wasi_readings() -> mediaparse_sdk::serde_json::Value {
    use std::hash::BuildHasher;
    use wasip2::{clocks, random};
    let wall = clocks::wall_clock::now();
    let seed = random::insecure_seed::insecure_seed();
    json!({
        "wall_ms": (wall.seconds * 1000 + u64::from(wall.nanoseconds) / 1_000_000).to_string(),
        "monotonic_ns": clocks::monotonic_clock::now().to_string(),
        "random": random::random::get_random_u64().to_string(),
        "random_bytes": random::random::get_random_bytes(8),
        "insecure": random::insecure::get_insecure_random_u64().to_string(),
        "insecure_seed": [seed.0.to_string(), seed.1.to_string()],
        // What std draws for its own use (hash map keys).
        "std_hash": std::collections::hash_map::RandomState::new().hash_one(42u64).to_string(),
        "std_system_time_ms": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis().to_string())
            .unwrap_or_default(),
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn wasi_readings() -> mediaparse_sdk::serde_json::Value {
    json!({})
}

mediaparse_sdk::export_extractor!(MpTest);
