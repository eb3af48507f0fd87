//! Cookies without a cookie jar: read `Set-Cookie` from earlier exchanges
//! and send them explicitly on a later round.

use crate::{Exchange, HttpResponse};

/// `name=value` pairs from a response's `Set-Cookie` headers, in order.
pub fn set_cookies(response: &HttpResponse) -> Vec<(String, String)> {
    response
        .header_values("set-cookie")
        .filter_map(|line| {
            let pair = line.split(';').next()?.trim();
            let (name, value) = pair.split_once('=')?;
            let name = name.trim();
            (!name.is_empty()).then(|| (name.to_string(), value.trim().to_string()))
        })
        .collect()
}

/// The value of one cookie set by a response.
pub fn cookie_value(response: &HttpResponse, name: &str) -> Option<String> {
    set_cookies(response)
        .into_iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// A `Cookie` header value from every cookie the exchanges set (a later
/// value of the same name replaces an earlier one; first-seen order kept).
pub fn cookie_header(done: &[Exchange]) -> String {
    join(&jar(done.iter().map(|e| &e.response)))
}

/// Every cookie these responses set, as `name=value` pairs: a later value
/// of the same name replaces an earlier one, first-seen order kept.
pub fn jar<'a>(responses: impl IntoIterator<Item = &'a HttpResponse>) -> Vec<(String, String)> {
    let mut jar: Vec<(String, String)> = Vec::new();
    for response in responses {
        for (name, value) in set_cookies(response) {
            match jar.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => jar.push((name, value)),
            }
        }
    }
    jar
}

/// Join pairs as a `Cookie` header value.
pub fn join(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, HttpRequest};

    fn response(cookies: &[&str]) -> HttpResponse {
        HttpResponse {
            request_url: "https://a.example/".into(),
            final_url: "https://a.example/".into(),
            status: 200,
            headers: cookies
                .iter()
                .map(|c| Header::new("Set-Cookie", *c))
                .collect(),
            body: vec![],
        }
    }

    #[test]
    fn reads_pairs_and_ignores_attributes() {
        let r = response(&[
            "tt_chain_token=abc==; Path=/; Secure",
            "ttwid=1%7Cx; HttpOnly",
            "bad",
        ]);
        assert_eq!(
            set_cookies(&r),
            vec![
                ("tt_chain_token".into(), "abc==".into()),
                ("ttwid".into(), "1%7Cx".into())
            ]
        );
        assert_eq!(cookie_value(&r, "ttwid").as_deref(), Some("1%7Cx"));
    }

    #[test]
    fn later_exchanges_replace_earlier_values() {
        let ex = |cookies: &[&str]| Exchange {
            request: HttpRequest::get("https://a.example/"),
            response: response(cookies),
        };
        let done = [ex(&["a=1", "b=2"]), ex(&["a=3"])];
        assert_eq!(cookie_header(&done), "a=3; b=2");
    }
}
