//! A legacy `/t/{code}` permalink is fetched as is (Threads redirects it to
//! the author's `/@{user}/post/{code}` page) and read like any post page.

use mediaparse_extractor_threads::Threads;
use mediaparse_sdk::{Context, Exchange, Extractor, HttpResponse, Plan};

#[test]
fn legacy_permalink_is_followed_to_the_post_page() {
    let target = Threads::detect("https://www.threads.net/t/CuXFPIeLLod").unwrap();
    let ctx = Context::default();
    let Ok(Plan::Fetch(requests)) = Threads::plan(&target, &ctx, &[]) else {
        panic!("the post page is requested first")
    };
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.url, "https://www.threads.com/t/CuXFPIeLLod");
    assert!(request.follow_redirects, "the /t/ redirect is followed");

    let page = r#"<html><script type="application/json" data-sjs>{"require":[{"post":{"pk":"3141002295235099165","code":"CuXFPIeLLod","media_type":19,"caption":{"text":"first thread"},"text_post_app_info":{},"user":{"username":"discoverocean"}}}]}</script></html>"#;
    let response = HttpResponse {
        request_url: request.url.clone(),
        final_url: "https://www.threads.com/@discoverocean/post/CuXFPIeLLod".into(),
        status: 200,
        headers: vec![],
        body: page.as_bytes().to_vec(),
    };
    let done = vec![Exchange {
        request: request.clone(),
        response,
    }];
    assert_eq!(Threads::plan(&target, &ctx, &done), Ok(Plan::Ready));
    let extraction = Threads::map(&target, &ctx, &done).unwrap();
    assert_eq!(extraction.media.title, "first thread");
}

#[test]
fn legacy_permalink_to_the_home_feed_is_unavailable() {
    let target = Threads::detect("https://www.threads.com/t/CuXFPIeLLod/").unwrap();
    let ctx = Context::default();
    let Ok(Plan::Fetch(requests)) = Threads::plan(&target, &ctx, &[]) else {
        panic!("the post page is requested first")
    };
    let response = HttpResponse {
        request_url: requests[0].url.clone(),
        final_url: "https://www.threads.com/".into(),
        status: 200,
        headers: vec![],
        body: b"<html>feed</html>".to_vec(),
    };
    let done = vec![Exchange {
        request: requests[0].clone(),
        response,
    }];
    let failure = Threads::plan(&target, &ctx, &done).unwrap_err();
    assert!(
        matches!(failure, mediaparse_sdk::Failure::Unavailable(_)),
        "{failure:?}"
    );
}
