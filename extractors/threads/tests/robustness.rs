//! Hostile or broken upstream answers end in a failure or a result, never a panic.

use mediaparse_extractor_threads::Threads;
use mediaparse_sdk::{Extractor, Header};

const BODIES: &[&str] = &[
    "",
    "\u{0}\u{1}garbage",
    "for (;;);",
    "{\"data\":null}",
    "{\"data\":{\"xig_polaris_media\":{\"if_not_gated_logged_out\":{\"code\":1}}}}",
    "<script type=\"application/json\" data-sjs>{\"a\":[[[[{\"code\":\"x\"}]]]]}</script>",
    "\"init\",[],[{\"contextJSON\":\"{\\\"gql_data\\\":{\\\"shortcode_media\\\":7}}\"}]",
    "\"init\",[],[",
    "<img class=\"EmbeddedMediaImage\" srcset=\"x 9999999999999w\">",
];

fn drive(input: &str, status: u16, body: &str, location: Option<&str>) {
    let mut headers = vec![Header::new("Set-Cookie", "csrftoken=; Path=/")];
    if let Some(l) = location {
        headers.push(Header::new("Location", l));
    }
    let answered = mediaparse_sdk::testing::drive_with_answer::<Threads>(
        input,
        status,
        &headers,
        body.as_bytes(),
    );
    assert!(answered > 0, "{input}: no request was answered");
}

#[test]
fn never_panics() {
    for input in [
        "https://www.threads.com/share/BAd-r4UCHz/",
        "https://www.threads.net/@natgeo/post/C8CTu0iswgv",
    ] {
        for status in [200, 302, 404, 429, 500] {
            for body in BODIES {
                for location in [
                    None,
                    Some("/"),
                    Some("::bad::"),
                    Some("https://evil.example/p/x"),
                ] {
                    drive(input, status, body, location);
                }
            }
        }
    }
}

#[test]
fn detect_never_panics() {
    for input in [
        "",
        "https://",
        "https://www.instagram.com/p/\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}/",
        "https://www.threads.com/@\u{1F600}/post/abcdef",
        "https://www.threads.com/share/%FF%FE",
        "http://[::1]/p/x",
        "https://www.instagram.com/share/p/%00/",
    ] {
        let _ = Threads::detect(input);
    }
}
