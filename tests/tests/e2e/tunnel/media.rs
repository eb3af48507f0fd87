//! The tunnel with real media (ffmpeg-made H.264 MP4, AAC M4A, JPEG) on a
//! fake CDN that enforces hotlink rules, binds a URL to one client address
//! and honours Range; the service's upstream override points at the CDN,
//! which passes the parse's own requests to the fixture replay. The parse is
//! Bilibili's DASH case (separate video and audio streams, Referer needed),
//! its recorded URL expiries moved to the far future.

use std::time::Duration;

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_cdn::{Answer, CdnFile, FakeCdn, Source, replay_routes};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::media::{DURATION_S, media, probe};
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::Value;

use super::parse;

/// The operator token of the rig (it opens `/metrics`).
const METRICS_TOKEN: &str = "operator-token-of-the-tunnel-media-rig";

pub(super) struct Rig {
    _upstream: FakeUpstream,
    pub(super) cdn: FakeCdn,
    pub(super) service: Service,
    pub(super) token: String,
    /// The post every parse of the rig asks for.
    pub(super) input: String,
    /// The parse answer's media, direct and tunnelled.
    pub(super) direct: Value,
    pub(super) tunnel: Value,
}

impl Rig {
    async fn start(extra_args: &[&str]) -> Rig {
        Rig::start_with(ServiceOptions {
            extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
            // `/metrics` is behind the operator token.
            admin_token: Some(METRICS_TOKEN.into()),
            ..Default::default()
        })
        .await
    }

    /// The rig with the service started from `options` (its upstream is the fake CDN).
    pub(super) async fn start_with(options: ServiceOptions) -> Rig {
        let case = Case::load(
            &paths::workspace_root().join("extractors/bilibili/fixtures/video_dash_primary"),
        )
        .expect("fixture case");
        let upstream =
            FakeUpstream::with_routes(replay_routes(std::slice::from_ref(&case)).unwrap())
                .await
                .unwrap();
        let cdn = FakeCdn::start(Some(upstream.base_url())).await.unwrap();
        let service = Service::start(ServiceOptions {
            upstream: Some(cdn.base_url()),
            ..options
        })
        .await
        .unwrap();
        service.add_credits("default", 100).unwrap();
        let token = service.create_key(&["--rate-limit", "off"]).unwrap();
        let mut answers = Vec::new();
        for query in ["", "?delivery=tunnel"] {
            let resp = parse(&service, &token, query, &case.input).await;
            assert_eq!(resp.status().as_u16(), 200, "parse{query}");
            let body: Value = resp.json().await.unwrap();
            answers.push(body["data"].clone());
        }
        let tunnel = answers.pop().unwrap();
        let direct = answers.pop().unwrap();
        Rig {
            _upstream: upstream,
            cdn,
            service,
            token,
            input: case.input.clone(),
            direct,
            tunnel,
        }
    }

    /// (direct URL, its Referer, tunnel URL) of `kind` (`videos`/`audios`) number `i`.
    pub(super) fn item(&self, kind: &str, i: usize) -> (String, String, String) {
        let d = &self.direct[kind][i];
        let referer = d["headers"]["Referer"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!referer.is_empty(), "bilibili media need a Referer");
        (
            d["url"].as_str().unwrap().to_string(),
            referer,
            self.tunnel[kind][i]["url"].as_str().unwrap().to_string(),
        )
    }

    pub(super) fn file(&self, url: &str, source: Source, content_type: &str, referer: &str) {
        let mut file = CdnFile::new(source, content_type);
        file.required = vec![mediaparse_sdk::Header::new("referer", referer)];
        file.etag = Some("\"e1\"".into());
        self.cdn.add(url, Answer::File(file));
    }
}

fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[tokio::test]
async fn real_media_streams_with_ranges_hotlink_rules_and_ip_binding() {
    let m = media();
    let (video, audio, jpeg) = (read(&m.video_mp4), read(&m.audio_m4a), read(&m.image_jpg));
    let rig = Rig::start(&[]).await;
    let (v_url, referer, v_tunnel) = rig.item("videos", 0);
    rig.file(
        &v_url,
        Source::Bytes(video.clone().into()),
        "video/mp4",
        &referer,
    );
    // The audio URL is bound to the address the parse left from (loopback 127.0.0.1).
    let (a_url, _, a_tunnel) = rig.item("audios", 0);
    let mut a_file = CdnFile::new(Source::Bytes(audio.clone().into()), "audio/mp4");
    a_file.required = vec![mediaparse_sdk::Header::new("referer", &referer)];
    a_file.bound_to = Some("127.0.0.1".parse().unwrap());
    rig.cdn.add(&a_url, Answer::File(a_file));
    let thumb = rig.direct["thumbnail"].as_str().unwrap().to_string();
    rig.cdn.add(
        &thumb,
        Answer::File(CdnFile::new(
            Source::Bytes(jpeg.clone().into()),
            "image/jpeg",
        )),
    );

    let client = reqwest::Client::new();
    // The rules bite: a caller fetching directly without the Referer is refused…
    let refused = client.get(rig.cdn.wire_url(&v_url)).send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    // …and the IP-bound URL refuses another address even with the Referer.
    let elsewhere = reqwest::Client::builder()
        .local_address(Some("127.0.0.2".parse().unwrap()))
        .build()
        .unwrap();
    let bound = elsewhere
        .get(rig.cdn.wire_url(&a_url))
        .header("referer", &referer)
        .send()
        .await
        .unwrap();
    assert_eq!(
        bound.status().as_u16(),
        403,
        "the URL is bound to the parse's address"
    );

    // Through the tunnel, no headers: every file arrives whole, from any caller address.
    for (url, bytes, ctype) in [
        (&v_tunnel, &video, "video/mp4"),
        (&a_tunnel, &audio, "audio/mp4"),
        (
            &rig.tunnel["thumbnail"].as_str().unwrap().to_string(),
            &jpeg,
            "image/jpeg",
        ),
    ] {
        let got = elsewhere.get(url).send().await.unwrap();
        assert_eq!(got.status().as_u16(), 200, "{url}");
        assert_eq!(got.headers()["content-type"], ctype);
        assert_eq!(got.headers()["content-length"], bytes.len().to_string());
        assert_eq!(got.headers()["accept-ranges"], "bytes");
        assert_eq!(&got.bytes().await.unwrap()[..], &bytes[..]);
    }
    let head = client.head(&v_tunnel).send().await.unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(head.headers()["content-length"], video.len().to_string());
    assert_eq!(head.headers()["etag"], "\"e1\"");
    assert!(head.bytes().await.unwrap().is_empty());

    // Ranges: closed, suffix, open; each slice equals the file's bytes.
    let len = video.len();
    for (range, start, end) in [
        ("bytes=100-1123", 100, 1124),
        ("bytes=-300", len - 300, len),
        ("bytes=2000-", 2000, len),
    ] {
        let got = client
            .get(&v_tunnel)
            .header("range", range)
            .send()
            .await
            .unwrap();
        assert_eq!(got.status().as_u16(), 206, "{range}");
        assert_eq!(
            got.headers()["content-range"],
            format!("bytes {start}-{}/{len}", end - 1)
        );
        assert_eq!(
            &got.bytes().await.unwrap()[..],
            &video[start..end],
            "{range}"
        );
    }
    let past = client
        .get(&v_tunnel)
        .header("range", format!("bytes={len}-"))
        .send()
        .await
        .unwrap();
    assert_eq!(past.status().as_u16(), 416);
}

#[tokio::test]
async fn merge_makes_one_fragmented_mp4_with_one_video_and_one_audio_stream() {
    let m = media();
    let rig = Rig::start(&[]).await;
    let (v_url, referer, v_tunnel) = rig.item("videos", 0);
    let (a_url, _, a_tunnel) = rig.item("audios", 0);
    rig.file(
        &v_url,
        Source::File(m.video_mp4.clone()),
        "video/mp4",
        &referer,
    );
    rig.file(
        &a_url,
        Source::File(m.audio_m4a.clone()),
        "audio/mp4",
        &referer,
    );
    let token = |url: &str| url.rsplit('/').next().unwrap().to_string();
    let merge = rig.service.url(&format!(
        "/api/v1/tunnel/merge?video={}&audio={}",
        token(&v_tunnel),
        token(&a_tunnel)
    ));
    let got = reqwest::get(&merge).await.unwrap();
    assert_eq!(got.status().as_u16(), 200);
    assert_eq!(got.headers()["content-type"], "video/mp4");
    let bytes = got.bytes().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.mp4");
    std::fs::write(&out, &bytes).unwrap();
    let (mut streams, duration) = probe(&out);
    streams.sort();
    assert_eq!(streams, ["audio", "video"]);
    assert!(
        (duration - DURATION_S).abs() < 0.3,
        "merged duration {duration} s, made {DURATION_S} s"
    );
    // Fragmented: an empty moov, then moof/mdat pairs.
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("moof") && text.contains("mvex"),
        "fragmented MP4"
    );

    // A tampered token is refused before ffmpeg starts; a missing one is 400.
    let bad = reqwest::get(rig.service.url(&format!(
        "/api/v1/tunnel/merge?video=AAAA{}&audio={}",
        token(&v_tunnel),
        token(&a_tunnel)
    )))
    .await
    .unwrap();
    assert_eq!(bad.status().as_u16(), 404);
    let missing = reqwest::get(rig.service.url("/api/v1/tunnel/merge?video=x"))
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 400);
}

#[tokio::test]
async fn disconnect_cancels_the_upstream_and_redirects_to_private_addresses_are_refused() {
    let rig = Rig::start(&[]).await;
    let (v_url, referer, v_tunnel) = rig.item("videos", 1);
    let big = 1u64 << 30;
    rig.file(&v_url, Source::Pattern(big), "video/mp4", &referer);
    let mut resp = reqwest::get(&v_tunnel).await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.chunk().await.unwrap().is_some());
    drop(resp);
    // The CDN sees its connection go before the body ends.
    let mut seen = None;
    for _ in 0..200 {
        seen = rig.cdn.served().into_iter().find(|s| s.url == v_url);
        if seen.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = seen.expect("the CDN's body ended within 10 s of the caller leaving");
    assert!(seen.aborted, "{seen:?}");
    assert!(seen.sent < big / 4, "stopped early: {seen:?}");

    // A redirect to a private or link-local address is never followed.
    for (i, to) in [
        (2, "http://10.0.0.1/secret.mp4"),
        (3, "https://169.254.169.254/latest/meta-data/"),
        (4, "http://127.0.0.1:1/x.mp4"),
    ] {
        let (url, _, tunnel) = rig.item("videos", i);
        rig.cdn.add(&url, Answer::Redirect(to.into()));
        let resp = reqwest::get(&tunnel).await.unwrap();
        assert_eq!(resp.status().as_u16(), 502, "{to}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["code"], "upstream_error", "{to}");
        let text = body.to_string();
        assert!(!text.contains("bilivideo") && !text.contains(to), "{text}");
    }
}

fn metric(text: &str, line_start: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn limits_answer_429_and_bytes_show_in_usage_and_metrics() {
    let limit = 100_000u64;
    let rig = Rig::start(&[
        "--tunnel-streams-per-key",
        "1",
        "--tunnel-bytes-per-day",
        &limit.to_string(),
        "--ffmpeg",
        "off",
    ])
    .await;
    let (v_url, referer, v_tunnel) = rig.item("videos", 0);
    rig.file(&v_url, Source::Pattern(64 << 20), "video/mp4", &referer);
    let (a_url, _, a_tunnel) = rig.item("audios", 0);
    rig.file(&a_url, Source::Pattern(1000), "audio/mp4", &referer);
    let client = reqwest::Client::new();

    // One stream open: a second one for the same key is 429 with Retry-After.
    let mut open = client.get(&v_tunnel).send().await.unwrap();
    assert_eq!(open.status().as_u16(), 200);
    let mut read = 0;
    while read < limit as usize {
        read += open.chunk().await.unwrap().unwrap().len();
    }
    let second = client.get(&a_tunnel).send().await.unwrap();
    assert_eq!(second.status().as_u16(), 429);
    assert_eq!(second.headers()["retry-after"], "1");
    let body: Value = second.json().await.unwrap();
    assert_eq!(body["code"], "tunnel_limited");
    drop(open);

    // Once that stream is gone, the day's bytes (over the limit) refuse the next one until midnight UTC.
    let mut refused = None;
    for _ in 0..100 {
        let resp = client.get(&a_tunnel).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 429);
        let after: u64 = resp.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        if after > 1 {
            refused = Some(after);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = refused.expect("a bytes-per-day refusal");
    assert!(after <= 86_400, "{after}");

    // Merging without ffmpeg is 501, in the envelope.
    let merge = client
        .get(rig.service.url("/api/v1/tunnel/merge?video=a&audio=b"))
        .send()
        .await
        .unwrap();
    assert_eq!(merge.status().as_u16(), 501);
    let body: Value = merge.json().await.unwrap();
    assert_eq!(body["code"], "merge_unavailable");

    // The bytes are in the usage views (CLI, account) and the metrics; no credits taken.
    let mut usage = Value::Null;
    for _ in 0..100 {
        let (code, out) = rig.service.cli(&["usage", "--json"]).unwrap();
        assert_eq!(code, 0, "{out}");
        usage = serde_json::from_str(out.trim()).unwrap();
        if usage["tunnel"]["bytes"].as_u64().unwrap_or(0) >= limit {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let bytes = usage["tunnel"]["bytes"].as_u64().unwrap();
    assert!(bytes >= limit, "{usage}");
    assert_eq!(usage["tunnel"]["byPlatform"][0]["name"], "bilibili");
    assert_eq!(
        usage["requests"], 2,
        "two parses charged; tunnel traffic takes no credits"
    );
    let account: Value = client
        .get(rig.service.url("/api/v1/account"))
        .bearer_auth(&rig.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(account["data"]["usage"]["tunnel"]["bytes"], bytes);
    let metrics = client
        .get(rig.service.url("/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let served = metric(
        &metrics,
        "mediaparse_tunnel_bytes_total{platform=\"bilibili\"}",
    )
    .expect("tunnel bytes metric");
    assert!(served >= limit as f64, "{served}");
    for reason in ["streams", "bytes"] {
        let n = metric(
            &metrics,
            &format!("mediaparse_tunnel_refusals_total{{reason=\"{reason}\"}}"),
        )
        .unwrap_or(0.0);
        assert!(n >= 1.0, "{reason} refusals: {n}");
    }
}
