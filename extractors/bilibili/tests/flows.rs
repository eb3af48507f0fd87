//! Plan/map paths that fixtures cannot record (the end-to-end fake upstream
//! answers one URL one way, so a refreshed `nav` with new keys needs a unit test).

use mediaparse_extractor_bilibili::Bilibili;
use mediaparse_sdk::{Context, Exchange, Extractor, Header, HttpRequest, HttpResponse, Plan};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

fn body(path: &str) -> Vec<u8> {
    std::fs::read(format!("{FIX}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn answer(request: &HttpRequest, status: u16, body: Vec<u8>) -> Exchange {
    Exchange {
        request: request.clone(),
        response: HttpResponse {
            request_url: request.url.clone(),
            final_url: request.url.clone(),
            status,
            headers: vec![],
            body,
        },
    }
}

fn ctx() -> Context {
    Context {
        now_unix_ms: 1_700_000_000_000,
        config: vec![],
        remembered: Vec::new(),
    }
}

fn fetch(plan: Plan) -> Vec<HttpRequest> {
    match plan {
        Plan::Fetch(requests) => requests,
        Plan::Ready => panic!("expected requests, got ready"),
    }
}

fn rotated_nav() -> Vec<u8> {
    String::from_utf8(body("video_dash_primary/nav.json"))
        .unwrap_or_default()
        .replace(
            "7cd084941338484aae1ad9425b84077c",
            "0123456789abcdef0123456789abcdef",
        )
        .into_bytes()
}

#[test]
fn stale_wbi_keys_are_refreshed_and_the_playurl_resigned_once() {
    let target = Bilibili::detect("https://www.bilibili.com/video/BV1rp4y1e745")
        .unwrap_or_else(|e| panic!("{e}"));
    let c = ctx();
    let mut done: Vec<Exchange> = Vec::new();

    let round1 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(round1.len(), 2);
    assert!(round1[1].url.ends_with("/x/web-interface/nav"));
    assert!(
        round1[1].cache_ttl_seconds > 0,
        "nav is a cacheable bootstrap call"
    );
    done.push(answer(
        &round1[0],
        200,
        body("video_dash_primary/view.json"),
    ));
    done.push(answer(&round1[1], 200, body("video_dash_primary/nav.json")));

    let round2 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(round2.len(), 1);
    let first_signed = round2[0].url.clone();
    done.push(answer(
        &round2[0],
        200,
        body("video_page_fallback/risk.json"),
    ));

    // Risk control: nav again, not from the cache, and the page fallback meanwhile.
    let round3 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(round3.len(), 2);
    assert!(round3[0].url.ends_with("/x/web-interface/nav"));
    assert_eq!(round3[0].cache_ttl_seconds, 0);
    assert!(
        round3[1]
            .url
            .starts_with("https://www.bilibili.com/video/BV1rp4y1e745/")
    );
    done.push(answer(&round3[0], 200, rotated_nav()));
    done.push(answer(
        &round3[1],
        200,
        body("video_html5_fallback/risk.html"),
    ));

    // New keys: the playurl is signed again, with another w_rid.
    let round4 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(round4.len(), 1);
    assert!(
        round4[0]
            .url
            .starts_with("https://api.bilibili.com/x/player/wbi/playurl?")
    );
    assert_ne!(round4[0].url, first_signed);
    done.push(answer(
        &round4[0],
        200,
        body("video_dash_primary/playurl.json"),
    ));

    assert_eq!(Bilibili::plan(&target, &c, &done).ok(), Some(Plan::Ready));
    let extraction = Bilibili::map(&target, &c, &done).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(extraction.media.videos.len(), 24);
    assert_eq!(extraction.media.audios.len(), 9);
}

#[test]
fn a_second_risk_answer_after_resigning_moves_on_to_the_fallbacks() {
    let target = Bilibili::detect("https://www.bilibili.com/video/BV1rp4y1e745")
        .unwrap_or_else(|e| panic!("{e}"));
    let c = ctx();
    let mut done: Vec<Exchange> = Vec::new();
    let r1 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    done.push(answer(&r1[0], 200, body("video_dash_primary/view.json")));
    done.push(answer(&r1[1], 200, body("video_dash_primary/nav.json")));
    let r2 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    done.push(answer(&r2[0], 412, vec![]));
    let r3 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    done.push(answer(&r3[0], 200, rotated_nav()));
    done.push(answer(&r3[1], 200, body("video_html5_fallback/risk.html")));
    let r4 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    done.push(answer(&r4[0], 200, body("video_page_fallback/risk.json")));
    // Re-signed once already: next is the html5 fallback.
    let r5 = fetch(Bilibili::plan(&target, &c, &done).unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(r5.len(), 1);
    assert!(r5[0].url.contains("platform=html5"), "{}", r5[0].url);
    done.push(answer(&r5[0], 200, body("video_page_fallback/risk.json")));
    let failure = Bilibili::plan(&target, &c, &done)
        .err()
        .unwrap_or_else(|| panic!("expected a failure"));
    assert_eq!(failure.code(), "upstream_rate_limited");
}

#[test]
fn map_before_everything_is_fetched_is_an_error_not_a_panic() {
    let target = Bilibili::detect("https://b23.tv/Fc9i7QF").unwrap_or_else(|e| panic!("{e}"));
    let failure = Bilibili::map(&target, &ctx(), &[])
        .err()
        .unwrap_or_else(|| panic!("expected failure"));
    assert_eq!(failure.code(), "upstream_error");
}

#[test]
fn short_links_chained_too_long_are_an_error() {
    let target = Bilibili::detect("https://b23.tv/AAAA001").unwrap_or_else(|e| panic!("{e}"));
    let c = ctx();
    let mut done: Vec<Exchange> = Vec::new();
    for hop in 1..=10 {
        match Bilibili::plan(&target, &c, &done) {
            Ok(Plan::Fetch(requests)) => {
                let request = &requests[0];
                assert!(!request.follow_redirects);
                let mut exchange = answer(request, 302, vec![]);
                exchange.response.headers = vec![Header::new(
                    "Location",
                    format!("https://b23.tv/AAAA{:03}", hop + 1),
                )];
                done.push(exchange);
            }
            Ok(Plan::Ready) => panic!("ready on a redirect loop"),
            Err(failure) => {
                assert_eq!(failure.code(), "upstream_error");
                assert!(hop <= 5, "gave up only after {hop} hops");
                return;
            }
        }
    }
    panic!("never gave up");
}

#[test]
fn garbage_answers_never_panic() {
    let garbage: [&[u8]; 6] = [
        b"",
        b"null",
        b"[]",
        b"{\"code\":0,\"data\":[]}",
        b"{\"code\":0,\"data\":{\"dash\":{\"video\":[{\"id\":\"x\"}]}}}",
        b"<html>",
    ];
    for url in [
        "https://www.bilibili.com/video/BV1rp4y1e745",
        "https://www.bilibili.com/bangumi/play/ss42290",
        "https://www.bilibili.com/bangumi/play/ep85046",
        "https://www.bilibili.com/cheese/play/ss61",
        "https://b23.tv/Fc9i7QF",
    ] {
        let target = Bilibili::detect(url).unwrap_or_else(|e| panic!("{e}"));
        for bad in garbage {
            let mut done: Vec<Exchange> = Vec::new();
            for _ in 0..8 {
                match Bilibili::plan(&target, &ctx(), &done) {
                    Ok(Plan::Fetch(requests)) => {
                        for r in &requests {
                            done.push(answer(r, 200, bad.to_vec()));
                        }
                    }
                    Ok(Plan::Ready) => {
                        let _ = Bilibili::map(&target, &ctx(), &done);
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
    }
}
