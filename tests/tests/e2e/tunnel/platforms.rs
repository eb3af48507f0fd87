//! Every platform's fixture cases with `?delivery=tunnel`: each case is
//! parsed direct and tunnelled by one service whose upstream override is the
//! fake CDN (which passes the parse's own requests to the fixture replay,
//! with the recorded URL expiries moved to the far future). Every media URL
//! of the direct answer is put on the CDN behind the headers the extractor
//! named (Referer, User-Agent, Cookie); every tunnel URL must download those
//! bytes without any header.

use std::collections::BTreeMap;

use mediaparse_sdk::fixture::{Case, DEFAULT_NOW_MS};
use mediaparse_tests::fake_cdn::{
    Answer, CdnFile, FakeCdn, Source, extend_url_expiry, pattern_byte, replay_routes,
};
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::Value;

use super::{media_urls, parse};

/// The length of the bytes the CDN serves for `url` (distinct per URL).
fn length_for(url: &str) -> u64 {
    2048 + url.bytes().map(u64::from).sum::<u64>() % 4096
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_platforms_fixtures_download_through_the_tunnel() {
    let mut cases: Vec<(String, Case)> = Vec::new();
    for (platform, dir) in paths::fixture_dirs() {
        for case in Case::load_all(&dir).expect("fixtures load") {
            let with_media = case.expect.media.as_ref().is_some_and(|m| {
                ["images", "videos", "audios"]
                    .iter()
                    .any(|k| m[k].as_array().is_some_and(|a| !a.is_empty()))
            });
            // Cases needing operator config, another clock or values
            // remembered from earlier parses run in fixtures_e2e / the replay tests.
            if with_media
                && case.config.is_empty()
                && case.remembered.is_empty()
                && case.now_unix_ms.is_none_or(|n| n == DEFAULT_NOW_MS)
            {
                cases.push((platform.clone(), case));
            }
        }
    }
    let all: Vec<Case> = cases.iter().map(|(_, c)| c.clone()).collect();
    let upstream = FakeUpstream::with_routes(replay_routes(&all).unwrap())
        .await
        .unwrap();
    let cdn = FakeCdn::start(Some(upstream.base_url())).await.unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(cdn.base_url()),
        extra_args: vec!["--tunnel-streams-per-key".into(), "0".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 1_000_000).unwrap();
    let token = service.create_key(&["--rate-limit", "off"]).unwrap();
    let client = reqwest::Client::new();
    let prefix = service.url("/api/v1/tunnel/");

    let mut downloaded: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (platform, case) in &cases {
        let name = format!("{platform}/{}", case.name());
        // An input that is itself a media URL carries an expiry too.
        let input = extend_url_expiry(&case.input);
        let mut answers = Vec::new();
        for query in ["", "?delivery=tunnel"] {
            let resp = parse(&service, &token, query, &input).await;
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            answers.push((status, body));
        }
        let (tunnel, direct) = (answers.pop().unwrap(), answers.pop().unwrap());
        if direct.0 != 200 || tunnel.0 != 200 {
            failures.push(format!("{name}: parse {} / {}", direct.0, tunnel.0));
            continue;
        }
        let direct = media_urls(&direct.1["data"]);
        let tunnelled = media_urls(&tunnel.1["data"]);
        if direct.len() != tunnelled.len() {
            failures.push(format!(
                "{name}: {} direct vs {} tunnel URLs",
                direct.len(),
                tunnelled.len()
            ));
            continue;
        }
        for ((url, headers), (t_url, t_headers)) in direct.iter().zip(&tunnelled) {
            if !t_url.starts_with(&prefix) || !t_headers.is_empty() {
                failures.push(format!("{name}: not a bare tunnel URL: {t_url}"));
                continue;
            }
            let mut file =
                CdnFile::new(Source::Pattern(length_for(url)), "application/octet-stream");
            file.required = headers.clone();
            cdn.add(url, Answer::File(file));
            let got = client.get(t_url).send().await.unwrap();
            let status = got.status().as_u16();
            let bytes = got.bytes().await.unwrap_or_default();
            let want: Vec<u8> = (0..length_for(url)).map(pattern_byte).collect();
            if status != 200 || bytes[..] != want[..] {
                failures.push(format!(
                    "{name}: {url} answered {status} with {} bytes (want 200, {})",
                    bytes.len(),
                    want.len()
                ));
                continue;
            }
            *downloaded.entry(platform.clone()).or_default() += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let platforms: std::collections::BTreeSet<&String> = cases.iter().map(|(p, _)| p).collect();
    for platform in platforms {
        assert!(
            downloaded.get(platform).is_some_and(|n| *n > 0),
            "{platform}: no media downloaded ({downloaded:?})"
        );
    }
    eprintln!("tunnel downloads by platform: {downloaded:?}");
}
