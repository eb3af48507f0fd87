//! Assertions for extractor tests (native only).

use crate::Extractor;
use crate::urls::{InputUrl, host_matches};

/// A parse context at time 0 with these operator settings and nothing
/// remembered, for tests of how an extractor reads its configuration.
pub fn context(config: &[(&str, &str)]) -> crate::Context {
    crate::Context {
        now_unix_ms: 0,
        config: config
            .iter()
            .map(|(n, v)| crate::Header::new(*n, *v))
            .collect(),
        remembered: Vec::new(),
    }
}

/// The host routes an input to an extractor by the host of its first URL
/// (DESIGN.md §2): assert that every input would reach extractor `E`, so a
/// shape `detect` accepts is never unreachable in the service.
///
/// ```
/// # use mediaparse_sdk::*;
/// # struct Demo;
/// # impl Extractor for Demo {
/// #   fn info() -> Info { Info { platform: "tiktok".into(), version: "0".into(), url_hosts: vec!["*.example.com".into()], api_hosts: vec![], url_shapes: vec![] } }
/// #   fn detect(_: &str) -> Result<Target> { Err(Failure::unsupported("")) }
/// #   fn step(_: &Target, _: &Context, _: &[Exchange]) -> Result<Step> { Err(Failure::unsupported("")) }
/// # }
/// mediaparse_sdk::testing::assert_routed_to::<Demo>(["https://m.example.com/v/1", "see https://example.com/v/2 !"]);
/// ```
pub fn assert_routed_to<'a, E: Extractor>(inputs: impl IntoIterator<Item = &'a str>) {
    let info = E::info();
    for input in inputs {
        let url = crate::share::first_url(input).unwrap_or_else(|| input.trim().to_string());
        let host = InputUrl::parse(&url)
            .map(|u| u.host)
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert!(
            info.url_hosts.iter().any(|p| host_matches(&host, p)),
            "{input}: host {host} is not in {}'s url_hosts {:?}, so the service would never route it there",
            info.platform,
            info.url_hosts
        );
    }
}

/// An exchange answering `request` with `status` and `body` (headers
/// empty): for unit tests that walk a flow by hand.
///
/// ```
/// let e = mediaparse_sdk::testing::exchange(mediaparse_sdk::HttpRequest::get("https://a.example/"), 404, "");
/// assert_eq!((e.response.status, e.response.final_url.as_str()), (404, "https://a.example/"));
/// ```
pub fn exchange(request: crate::HttpRequest, status: u16, body: &str) -> crate::Exchange {
    crate::Exchange {
        response: crate::HttpResponse {
            request_url: request.url.clone(),
            final_url: request.url.clone(),
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        },
        request,
    }
}

/// Drive `E` through detect, up to ten plan rounds and map, answering every
/// planned request with the same canned response. For robustness tests:
/// whatever the answer, the extractor must end in a result or a failure,
/// never a panic (a panic in a component is a trap and a 500).
///
/// Panics when `detect` rejects `input`: the answers would never reach the
/// extractor, and a never-panics test built on it would test nothing.
/// Returns how many requests were answered.
///
/// ```should_panic
/// # use mediaparse_sdk::*;
/// # struct Demo;
/// # impl Extractor for Demo {
/// #   fn info() -> Info { Info { platform: "demo".into(), version: "0".into(), url_hosts: vec![], api_hosts: vec![], url_shapes: vec![] } }
/// #   fn detect(_: &str) -> Result<Target> { Err(Failure::unsupported("")) }
/// #   fn step(_: &Target, _: &Context, _: &[Exchange]) -> Result<Step> { Err(Failure::unsupported("")) }
/// # }
/// mediaparse_sdk::testing::drive_with_answer::<Demo>("https://example.com/v/1", 200, &[], b"");
/// ```
pub fn drive_with_answer<E: Extractor>(
    input: &str,
    status: u16,
    headers: &[crate::Header],
    body: &[u8],
) -> usize {
    let target = E::detect(input).unwrap_or_else(|f| {
        panic!(
            "{input}: detect failed ({} {f}), so no answer would reach the extractor",
            f.code()
        )
    });
    let ctx = crate::Context::default();
    let mut done: Vec<crate::Exchange> = Vec::new();
    for _ in 0..10 {
        match E::plan(&target, &ctx, &done) {
            Ok(crate::Plan::Fetch(requests)) => {
                for request in requests {
                    let response = crate::HttpResponse {
                        request_url: request.url.clone(),
                        final_url: request.url.clone(),
                        status,
                        headers: headers.to_vec(),
                        body: body.to_vec(),
                    };
                    done.push(crate::Exchange { request, response });
                }
            }
            Ok(crate::Plan::Ready) => {
                let _ = E::map(&target, &ctx, &done);
                break;
            }
            Err(_) => break,
        }
    }
    done.len()
}
