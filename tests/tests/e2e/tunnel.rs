//! Media delivery through the tunnel, end to end: a TikTok photo
//! post parsed with `?delivery=tunnel` by the real binary; every media URL
//! points at the service, needs no headers, and downloads the bytes the
//! (fake) CDN serves only with the Referer the extractor asked for. Altered
//! tokens are `404 tunnel_not_found`, expired ones `410 tunnel_expired`,
//! and a key's default delivery applies when the request does not say.

mod guards;
mod media;
mod platforms;

use mediaparse_sdk::Header;
use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::{FakeUpstream, Route};
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

fn photo_case() -> Case {
    Case::load(&paths::workspace_root().join("extractors/tiktok/fixtures/photo_post"))
        .expect("fixture case")
}

/// Every media URL of a media object with the headers it needs.
fn media_urls(media: &Value) -> Vec<(String, Vec<Header>)> {
    let mut out = Vec::new();
    if let Some(t) = media["thumbnail"].as_str().filter(|t| !t.is_empty()) {
        out.push((t.to_string(), Vec::new()));
    }
    for kind in ["images", "videos", "audios"] {
        for item in media[kind].as_array().into_iter().flatten() {
            let headers = item["headers"]
                .as_object()
                .map(|h| {
                    h.iter()
                        .map(|(k, v)| Header::new(k.clone(), v.as_str().unwrap_or_default()))
                        .collect()
                })
                .unwrap_or_default();
            out.push((item["url"].as_str().unwrap().to_string(), headers));
        }
    }
    out
}

/// Whether the URL's own `x-expires` (unix seconds) is in the past.
fn own_expiry_passed(url: &str) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("x-expires="))
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|e| e < now)
}

/// Bytes the fake CDN serves for the `i`th URL.
fn media_bytes(i: usize) -> Vec<u8> {
    (0..64 * 1024 + i).map(|n| (n * 31 + i) as u8).collect()
}

async fn parse(service: &Service, token: &str, query: &str, input: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(service.url(&format!("/api/v1/parse{query}")))
        .bearer_auth(token)
        .json(&json!({"url": input}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn tunnelled_urls_download_the_media_and_refuse_tampering() {
    let photo = photo_case();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 10).unwrap();
    let token = service.create_key(&[]).unwrap();

    // Direct: the platform's URLs and their headers, as SPEC says.
    let direct: Value = parse(&service, &token, "", &photo.input)
        .await
        .json()
        .await
        .unwrap();
    let direct = media_urls(&direct["data"]);
    assert!(direct.len() >= 3, "a carousel with its sound");
    for (i, (url, headers)) in direct.iter().enumerate() {
        assert!(url.starts_with("https://"), "{url}");
        // The fake CDN refuses a request without the headers the extractor named.
        upstream.add_route(Route {
            method: "GET".into(),
            url: url.clone(),
            header_constraints: headers.clone(),
            body_constraint: None,
            status: 200,
            headers: vec![
                Header::new("content-type", "image/jpeg"),
                Header::new("etag", format!("\"m{i}\"")),
            ],
            body: media_bytes(i),
        });
    }

    let resp = parse(&service, &token, "?delivery=tunnel", &photo.input).await;
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.unwrap();
    let tunnelled = media_urls(&body["data"]);
    assert_eq!(
        tunnelled.len(),
        direct.len(),
        "the same media, in the same order"
    );
    let prefix = service.url("/api/v1/tunnel/");
    let client = reqwest::Client::new();
    let mut downloaded = 0;
    for (i, (url, headers)) in tunnelled.iter().enumerate() {
        assert!(url.starts_with(&prefix), "{url}");
        assert!(headers.is_empty(), "no headers needed: {headers:?}");
        let token_part = &url[prefix.len()..];
        assert!(
            !token_part.contains("tiktokcdn"),
            "the upstream URL is sealed"
        );
        // No Authorization: the token is the capability. A URL whose own
        // `x-expires` has passed (recorded fixtures) is already gone.
        let got = client.get(url).send().await.unwrap();
        if own_expiry_passed(&direct[i].0) {
            assert_eq!(got.status().as_u16(), 410, "{}", direct[i].0);
            continue;
        }
        downloaded += 1;
        assert_eq!(got.status().as_u16(), 200, "{}", direct[i].0);
        assert_eq!(got.headers()["content-type"], "image/jpeg");
        assert_eq!(got.headers()["etag"], format!("\"m{i}\""));
        assert_eq!(
            got.bytes().await.unwrap().as_ref(),
            media_bytes(i).as_slice()
        );
    }

    assert!(
        downloaded > 0,
        "at least one URL without a past expiry downloads"
    );

    // An altered token, or something that is not one, is 404 in the envelope.
    let (url, _) = &tunnelled[0];
    let mut altered = url.clone().into_bytes();
    let at = prefix.len() + 10;
    altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
    for bad in [
        String::from_utf8(altered).unwrap(),
        service.url("/api/v1/tunnel/nope"),
    ] {
        let resp = client.get(&bad).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 404, "{bad}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["code"], "tunnel_not_found");
    }

    // A bad delivery value is refused before anything is fetched or charged.
    let resp = parse(&service, &token, "?delivery=carrier-pigeon", &photo.input).await;
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(resp.headers()["x-credits-charged"], "0");

    // A key whose default is tunnel gets tunnel URLs without asking; a request may still say direct.
    let (code, out) = service.cli(&["keys", "list", "--json"]).unwrap();
    assert_eq!(code, 0, "{out}");
    let keys: Value = serde_json::from_str(out.trim()).unwrap();
    let id = keys[0]["id"].as_str().unwrap().to_string();
    let (code, out) = service
        .cli(&["keys", "edit", &id, "--delivery", "tunnel", "--json"])
        .unwrap();
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        serde_json::from_str::<Value>(out.trim()).unwrap()["delivery"],
        "tunnel"
    );
    let body: Value = parse(&service, &token, "", &photo.input)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        media_urls(&body["data"])
            .iter()
            .all(|(u, _)| u.starts_with(&prefix))
    );
    let body: Value = parse(&service, &token, "?delivery=direct", &photo.input)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(media_urls(&body["data"]), direct);
}

/// A tunnel URL lives `--tunnel-ttl-secs` (here 4 s) and no longer: the
/// media URL it wraps carries no expiry of its own that has passed, so only
/// the flag can end it. Downloaded while young (a fetch that ends before the
/// TTL has run from before the parse must be served), `410 tunnel_expired`
/// once the TTL has run (never before it), found by polling with a deadline.
#[tokio::test]
async fn expired_tunnel_urls_are_gone() {
    const TTL: std::time::Duration = std::time::Duration::from_secs(4);
    let photo = photo_case();
    let upstream = FakeUpstream::start(std::slice::from_ref(&photo))
        .await
        .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        extra_args: vec!["--tunnel-ttl-secs".into(), TTL.as_secs().to_string()],
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 100).unwrap();
    let token = service.create_key(&[]).unwrap();
    let direct: Value = parse(&service, &token, "", &photo.input)
        .await
        .json()
        .await
        .unwrap();
    let direct = media_urls(&direct["data"]);
    // A media URL without a past expiry of its own, served by the fake CDN.
    let i = direct
        .iter()
        .position(|(url, _)| !own_expiry_passed(url))
        .expect("a media URL whose own expiry has not passed");
    let (url, headers) = &direct[i];
    upstream.add_route(Route {
        method: "GET".into(),
        url: url.clone(),
        header_constraints: headers.clone(),
        body_constraint: None,
        status: 200,
        headers: vec![Header::new("content-type", "image/jpeg")],
        body: media_bytes(i),
    });
    // Young: served. Tried again (a fresh token) should a loaded machine
    // make one round take longer than the TTL.
    let mut young = None;
    for _ in 0..5 {
        let minted_after = std::time::Instant::now();
        let body: Value = parse(&service, &token, "?delivery=tunnel", &photo.input)
            .await
            .json()
            .await
            .unwrap();
        let (tunnel_url, _) = media_urls(&body["data"]).remove(i);
        let status = reqwest::get(&tunnel_url).await.unwrap().status().as_u16();
        if minted_after.elapsed() < TTL {
            assert_eq!(status, 200, "a tunnel URL younger than its TTL");
            young = Some((tunnel_url, minted_after));
            break;
        }
    }
    let (tunnel_url, minted_after) = young.expect("one round within the TTL");
    // Gone once the TTL has run, and not before.
    let deadline = TTL + std::time::Duration::from_secs(30);
    let resp = loop {
        let checked = std::time::Instant::now();
        let resp = reqwest::get(&tunnel_url).await.unwrap();
        if resp.status().as_u16() != 200 {
            // Asked after `checked`; the token was minted before it, no
            // earlier than `minted_after`.
            assert!(
                minted_after.elapsed() >= TTL,
                "gone after {:?}, before its TTL of {TTL:?}",
                checked - minted_after
            );
            break resp;
        }
        assert!(
            minted_after.elapsed() < deadline,
            "still served {deadline:?} after it was minted (TTL {TTL:?})"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert_eq!(resp.status().as_u16(), 410);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "tunnel_expired");
}
