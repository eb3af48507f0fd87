//! The vertical slice, end to end: a TikTok photo post parsed over real HTTP
//! by the real binary and component, against the recorded page served by the
//! fake upstream; every image with its size, the sound, one credit, one
//! ledger row. A deleted post charges nothing.

use mediaparse_sdk::fixture::Case;
use mediaparse_tests::fake_upstream::FakeUpstream;
use mediaparse_tests::paths;
use mediaparse_tests::service::{Service, ServiceOptions};
use serde_json::{Value, json};

fn tiktok_case(name: &str) -> Case {
    let dir = paths::workspace_root()
        .join("extractors/tiktok/fixtures")
        .join(name);
    Case::load(&dir).expect("fixture case")
}

/// The images of the post as the recorded page itself lists them.
fn images_in_page(case: &Case) -> Vec<(String, u64, u64)> {
    let page = String::from_utf8(case.body(&case.exchanges[0]).unwrap()).unwrap();
    let json = mediaparse_sdk::html::script_by_id(&page, "__UNIVERSAL_DATA_FOR_REHYDRATION__")
        .expect("rehydration script");
    let data: Value = serde_json::from_str(json).unwrap();
    let item = &data["__DEFAULT_SCOPE__"]["webapp.video-detail"]["itemInfo"]["itemStruct"];
    item["imagePost"]["images"]
        .as_array()
        .expect("imagePost.images")
        .iter()
        .map(|i| {
            (
                i["imageURL"]["urlList"][0]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                i["imageWidth"].as_u64().unwrap_or(0),
                i["imageHeight"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[tokio::test]
async fn photo_post_is_parsed_charged_once_and_a_deleted_post_costs_nothing() {
    let photo = tiktok_case("photo_post");
    let deleted = tiktok_case("deleted");
    let upstream = FakeUpstream::start(&[photo.clone(), deleted.clone()])
        .await
        .unwrap();
    let service = Service::start(ServiceOptions {
        upstream: Some(upstream.base_url()),
        ..Default::default()
    })
    .await
    .unwrap();
    service.add_credits("default", 5).unwrap();
    let token = service.create_key(&[]).unwrap();
    let client = reqwest::Client::new();

    let resp = client
        .post(service.url("/api/v1/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": photo.input}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["x-credits-charged"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["msg"], "success");
    let media = &body["data"];
    assert_eq!(media["platform"], "tiktok");
    let want = images_in_page(&photo);
    assert!(want.len() >= 3, "the fixture is a real carousel");
    let got: Vec<(u64, u64)> = media["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["width"].as_u64().unwrap(), i["height"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        want.iter().map(|(_, w, h)| (*w, *h)).collect::<Vec<_>>(),
        "every image, in order, with its size"
    );
    for image in media["images"].as_array().unwrap() {
        assert!(image["url"].as_str().unwrap().starts_with("https://"));
    }
    let audios = media["audios"].as_array().unwrap();
    assert!(!audios.is_empty(), "the post's sound is returned");
    assert!(audios[0]["url"].as_str().unwrap().starts_with("https://"));
    assert!(
        upstream
            .hits()
            .iter()
            .any(|h| h.contains("/photo/") || h.contains("/video/")),
        "the page was fetched through the override"
    );

    let resp = client
        .post(service.url("/api/v1/platforms/tiktok/parse"))
        .bearer_auth(&token)
        .json(&json!({"url": deleted.input}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    assert_eq!(resp.headers()["x-credits-charged"], "0");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "content_unavailable");

    let store = mediaparse::store::Store::open(&service.db).unwrap();
    assert_eq!(store.ledger_count(None).unwrap(), 1, "one ledger row");
    assert_eq!(store.ledger_sum(None).unwrap(), 1);
    assert_eq!(store.balance("default").unwrap(), 4);
}
