//! Every recorded case under fixtures/, replayed natively.

use mediaparse_extractor_bilibili::Bilibili;
use mediaparse_sdk::fixture::Case;
use mediaparse_sdk::replay;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

#[test]
fn fixtures() {
    replay::assert_fixtures::<Bilibili>(FIXTURES);
}

/// Each case records exactly the hops the extractor asks for: no recorded
/// exchange goes unused (a strategy that silently stopped being tried, or a
/// fallback that is never reached, would show here).
#[test]
fn every_recorded_exchange_is_requested() {
    let cases = Case::load_all(FIXTURES.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut problems = Vec::new();
    for case in &cases {
        let outcome =
            replay::run::<Bilibili>(case).unwrap_or_else(|e| panic!("{}: {e}", case.name()));
        if outcome.requests.len() != case.exchanges.len() {
            problems.push(format!(
                "{}: {} requests planned, {} exchanges recorded: {:#?}",
                case.name(),
                outcome.requests.len(),
                case.exchanges.len(),
                outcome.requests.iter().map(|r| &r.url).collect::<Vec<_>>()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Session bootstrap (`nav`, the WBI keys) is cacheable; nothing else is,
/// and short links are never followed by the host.
#[test]
fn bootstrap_is_cached_and_short_links_are_not_followed() {
    let cases = Case::load_all(FIXTURES.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    for case in &cases {
        let outcome =
            replay::run::<Bilibili>(case).unwrap_or_else(|e| panic!("{}: {e}", case.name()));
        let mut navs = 0;
        for request in &outcome.requests {
            let is_nav = request.url == "https://api.bilibili.com/x/web-interface/nav";
            if is_nav {
                navs += 1;
                // The first nav may come from the host's cache; a refresh never does.
                let want = if navs == 1 { 1800 } else { 0 };
                assert_eq!(
                    request.cache_ttl_seconds,
                    want,
                    "{}: nav #{navs}",
                    case.name()
                );
            } else {
                assert_eq!(
                    request.cache_ttl_seconds,
                    0,
                    "{}: {}",
                    case.name(),
                    request.url
                );
            }
            let short = ["https://b23.tv/", "https://bili2233.cn/"];
            if short.iter().any(|s| request.url.starts_with(s)) {
                assert!(
                    !request.follow_redirects,
                    "{}: short link followed",
                    case.name()
                );
            }
            assert!(
                request.header_value("Cookie").is_none() || !case.config.is_empty(),
                "{}: a cookie was sent without operator config",
                case.name()
            );
        }
    }
}
