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

/// Inputs no `detect` may panic on, whatever the platform: empty and
/// half-written URLs, hosts that are addresses, bad percent-encoding, NULs,
/// characters of every width, and a very long one.
const HOSTILE_INPUTS: &[&str] = &[
    "",
    " ",
    "https://",
    "https:///",
    "http://[::1]/p/x",
    "http://[::1",
    "https://127.0.0.1:99999/x",
    "https://%FF%FE/",
    "https://example.com/%FF%FE%",
    "https://example.com/\u{0}",
    "javascript:alert(1)",
    "data:text/html,<b>x</b>",
    "https://\u{1F600}.com/\u{e9}\u{e9}/\u{1F600}",
    "\u{202E}https://example.com/",
    "https://user:pass@example.com:0/a?b=%&c=#d",
];

/// Path segments put after every `/` of each input in [`assert_detect_survives`].
const HOSTILE_SEGMENTS: &[&str] = &["%FF%FE", "%00", "%", "\u{e9}\u{e9}", "\u{1F600}", "@", ".."];

/// `detect` of `E` ends in a target or a failure, never a panic, on the
/// shared hostile inputs, on `inputs` (the platform's own URLs), on every
/// prefix of each of those, each with one character doubled or dropped, and
/// each with a hostile segment after one of its `/`. Panics naming the
/// first input that made `detect` panic.
pub fn assert_detect_survives<'a, E: Extractor>(inputs: impl IntoIterator<Item = &'a str>) {
    let long = format!("https://example.com/{}", "a/".repeat(50_000));
    let mut cases: Vec<String> = HOSTILE_INPUTS.iter().map(|s| s.to_string()).collect();
    cases.push(long);
    for input in inputs {
        let bounds: Vec<usize> = input
            .char_indices()
            .map(|(i, _)| i)
            .chain([input.len()])
            .collect();
        for w in bounds.windows(2) {
            let (at, next) = (w[0], w[1]);
            cases.push(input[..at].to_string());
            cases.push(format!("{}{}", &input[..next], &input[at..]));
            cases.push(format!("{}{}", &input[..at], &input[next..]));
        }
        for (at, _) in input.match_indices('/') {
            for segment in HOSTILE_SEGMENTS {
                cases.push(format!("{}{segment}{}", &input[..=at], &input[at + 1..]));
            }
        }
        cases.push(input.to_string());
    }
    for case in &cases {
        if let Err(e) = std::panic::catch_unwind(|| E::detect(case)) {
            panic!(
                "{}: detect panicked ({}) on {case:?}",
                E::info().platform,
                panic_text(&*e)
            );
        }
    }
}

/// Statuses every flow is answered with in [`assert_survives_answers`].
const HOSTILE_STATUSES: &[u16] = &[200, 204, 302, 403, 404, 429, 500];

/// `Location` headers every flow is answered with (none, relative, not a
/// URL, another site's).
const HOSTILE_LOCATIONS: &[Option<&str>] = &[
    None,
    Some("/"),
    Some("::bad::"),
    Some("https://evil.example/p/x"),
];

/// Bodies no flow may panic on: empty, binary, JSON of no use (anti-hijack
/// prefixes, wrong types, cut short, nested deeper than any parser's
/// recursion limit), pages without their data, and numbers past every
/// integer type.
fn hostile_bodies() -> Vec<String> {
    let mut bodies: Vec<String> = [
        "",
        "\u{0}\u{1}\u{FFFD}garbage",
        "for (;;);",
        ")]}'\n",
        "null",
        "[]",
        "{}",
        "\"\"",
        "{\"data\":null}",
        "{\"data\":[]}",
        "{\"data\":{\"items\":[null,1,\"x\",{}]}}",
        "{\"a\":",
        "{\"code\":99999999999999999999999,\"status\":-1e999}",
        "<!doctype html><html><head><title></title></head><body></body></html>",
        "<script>window.__INITIAL_STATE__={</script>",
        "<script id=\"__NEXT_DATA__\" type=\"application/json\">{\"props\":7}</script>",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    bodies.push(format!("{}{}", "[".repeat(20_000), "]".repeat(20_000)));
    bodies.push(format!("{{\"a\":{}", "{\"a\":".repeat(20_000)));
    bodies
}

/// Drive `E` from each of `inputs` (each one its `detect` accepts) through
/// its flow, answering every request with each combination of a status, a
/// body (the shared hostile ones and the platform's own `bodies`, shaped
/// like its real answers but broken) and a `Location`, with `headers` on
/// every answer. Whatever the answer, the flow must end in a result or a failure,
/// never a panic: in a component a panic is a trap, and the caller's
/// `500`. Panics naming the first combination that made the flow panic, and
/// when no request was answered (the test would test nothing).
pub fn assert_survives_answers<E: Extractor>(
    inputs: &[&str],
    bodies: &[&str],
    headers: &[crate::Header],
) {
    let mut all = hostile_bodies();
    all.extend(bodies.iter().map(|b| b.to_string()));
    for input in inputs {
        if let Err(f) = E::detect(input) {
            panic!("{input}: detect refuses it ({f}), so no answer would reach the flow");
        }
        for &status in HOSTILE_STATUSES {
            for body in &all {
                for location in HOSTILE_LOCATIONS {
                    let mut answer_headers = headers.to_vec();
                    if let Some(l) = location {
                        answer_headers.push(crate::Header::new("Location", *l));
                    }
                    let driven = std::panic::catch_unwind(|| {
                        drive_with_answer::<E>(input, status, &answer_headers, body.as_bytes())
                    });
                    match driven {
                        Ok(0) => panic!("{input}: no request was answered"),
                        Ok(_) => {}
                        Err(e) => panic!(
                            "{input}: the flow panicked ({}) on status {status}, Location {location:?}, body {:?}",
                            panic_text(&*e),
                            body.chars().take(80).collect::<String>()
                        ),
                    }
                }
            }
        }
    }
}

/// Past this many bytes, [`assert_survives_broken_fixtures`] cuts a body in
/// fewer places.
const BIG_BODY: usize = 256 * 1024;

/// Replay every case under `fixtures_dir` again and again, each time with
/// one recorded answer broken: its body emptied, cut in half, or short of
/// its last byte. These are the
/// platform's own shapes, failing the way real answers fail (a connection
/// cut mid-body, a changed page that lost its end). The flow must end in a
/// result or a failure, never a panic. Panics naming the first case, answer
/// and cut that made the flow panic.
pub fn assert_survives_broken_fixtures<E: Extractor>(fixtures_dir: impl AsRef<std::path::Path>) {
    let dir = fixtures_dir.as_ref();
    let cases = crate::fixture::Case::load_all(dir)
        .unwrap_or_else(|e| panic!("loading fixtures under {}: {e}", dir.display()));
    assert!(
        !cases.is_empty(),
        "no fixture cases under {}",
        dir.display()
    );
    // (case, answer, its body, where it is cut)
    let mut variants: Vec<(&crate::fixture::Case, usize, std::sync::Arc<Vec<u8>>, usize)> =
        Vec::new();
    for case in &cases {
        for (index, exchange) in case.exchanges.iter().enumerate() {
            let body = case
                .body(exchange)
                .unwrap_or_else(|e| panic!("{}: reading a body: {e}", case.name()));
            let len = body.len();
            let body = std::sync::Arc::new(body);
            // A body past 256 KiB (a whole player script) is cut near its
            // start, not short of its end: each cut costs a full read of
            // what is left, and the failure paths are the same.
            let mut cuts = if len > BIG_BODY {
                vec![0, 4096, len / 2]
            } else {
                vec![0, len / 2, len.saturating_sub(1)]
            };
            cuts.dedup();
            for cut in cuts {
                variants.push((case, index, body.clone(), cut));
            }
        }
    }
    assert!(
        !variants.is_empty(),
        "no recorded answer under {}",
        dir.display()
    );
    // The variants are independent: replay them on every core.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failure = std::sync::Mutex::new(None::<String>);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((case, index, body, cut)) = variants.get(i) else {
                        return;
                    };
                    let mut variant = (*case).clone();
                    let response = &mut variant.exchanges[*index].response;
                    response.body_file = None;
                    response.body = Some(String::from_utf8_lossy(&body[..*cut]).into_owned());
                    let ran = std::panic::catch_unwind(|| crate::replay::run::<E>(&variant));
                    if let Err(e) = ran {
                        let request = &case.exchanges[*index].request;
                        let text = format!(
                            "{}: the flow panicked ({}) with answer {} ({} {}) cut to {cut} of {} bytes",
                            case.name(),
                            panic_text(&*e),
                            index + 1,
                            request.method,
                            request.url,
                            body.len()
                        );
                        if let Ok(mut first) = failure.lock() {
                            first.get_or_insert(text);
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(text) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        panic!("{text}");
    }
}

/// The message a caught panic carried.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, Exchange, Failure, HttpRequest, Info, Media, Result, Step, Target};

    /// Panics on what the harnesses feed it: `detect` on a NUL segment, the
    /// flow on an empty answer.
    struct Fragile;

    impl Extractor for Fragile {
        fn info() -> Info {
            Info {
                platform: "fragile".into(),
                version: "0".into(),
                url_hosts: vec!["example.com".into()],
                api_hosts: vec!["example.com".into()],
                url_shapes: vec![],
            }
        }
        fn detect(input: &str) -> Result<Target> {
            assert!(!input.contains("%00"), "a NUL segment");
            let id = input
                .strip_prefix("https://example.com/v/")
                .ok_or_else(|| Failure::unsupported("not a post"))?;
            Ok(Target {
                platform: "fragile".into(),
                id: id.into(),
                canonical_url: input.into(),
                input: input.into(),
            })
        }
        fn step(t: &Target, _: &Context, done: &[Exchange]) -> Result<Step> {
            let Some(answer) = done.last() else {
                return Ok(Step::one(HttpRequest::get(t.canonical_url.clone())));
            };
            let first = answer.response.body[0];
            Ok(Step::Done(crate::Extraction {
                media: Media {
                    title: first.to_string(),
                    ..Media::default()
                },
                platform_data: crate::PlatformData::default(),
            }))
        }
    }

    #[test]
    #[should_panic(expected = "the flow panicked (index out of bounds")]
    fn a_flow_that_panics_on_an_empty_answer_fails_the_answers_harness() {
        assert_survives_answers::<Fragile>(&["https://example.com/v/1"], &[], &[]);
    }

    #[test]
    #[should_panic(expected = "detect panicked (a NUL segment)")]
    fn a_detect_that_panics_fails_the_detect_harness() {
        assert_detect_survives::<Fragile>(["https://example.com/v/1"]);
    }

    #[test]
    #[should_panic(expected = "the flow panicked (index out of bounds")]
    fn a_flow_that_panics_on_a_cut_answer_fails_the_fixtures_harness() {
        let dir =
            std::env::temp_dir().join(format!("mediaparse-sdk-fragile-{}", std::process::id()));
        let case = dir.join("a_post");
        std::fs::create_dir_all(&case).unwrap();
        std::fs::write(
            case.join("case.json"),
            r#"{"description": "one answer", "input": "https://example.com/v/1",
                "exchanges": [{"request": {"method": "GET", "url": "https://example.com/v/1"},
                               "response": {"status": 200, "body": "ok"}}],
                "expect": {"media": {"title": "111"}}}"#,
        )
        .unwrap();
        let ran = std::panic::catch_unwind(|| assert_survives_broken_fixtures::<Fragile>(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        if let Err(e) = ran {
            std::panic::resume_unwind(e);
        }
    }

    #[test]
    #[should_panic(expected = "detect refuses it")]
    fn an_input_detect_refuses_is_a_mistake_of_the_test() {
        assert_survives_answers::<Fragile>(&["https://example.org/v/1"], &[], &[]);
    }
}
