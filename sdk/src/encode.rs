//! Percent-encoding of URL components (query values, form fields).
//!
//! [`component`] is JavaScript's `encodeURIComponent`: everything but
//! `A-Z a-z 0-9 - _ . ! ~ * ' ( )` becomes `%XX` (UTF-8 bytes, upper-case
//! hex). [`strict`] also escapes `! * ' ( )`, leaving only RFC 3986's
//! unreserved characters: what form encoders, OAuth-style signers and
//! Bilibili's WBI signature expect.
//!
//! ```
//! use mediaparse_sdk::encode::{component, strict};
//! assert_eq!(component("a b&c=d/é!*"), "a%20b%26c%3Dd%2F%C3%A9!*");
//! assert_eq!(strict("a b&c=d/é!*"), "a%20b%26c%3Dd%2F%C3%A9%21%2A");
//! assert_eq!(strict("-_.~"), "-_.~");
//! ```

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - _ . ~`).
const STRICT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// What `encodeURIComponent` escapes: [`STRICT`] minus `! * ' ( )`.
const COMPONENT: &AsciiSet = &STRICT
    .remove(b'!')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// JavaScript `encodeURIComponent` semantics.
pub fn component(value: &str) -> String {
    utf8_percent_encode(value, COMPONENT).to_string()
}

/// Only RFC 3986 unreserved characters stay as they are.
pub fn strict(value: &str) -> String {
    utf8_percent_encode(value, STRICT).to_string()
}

/// `name=value` pairs joined with `&`, each side [`strict`]-encoded: a
/// query string or an `application/x-www-form-urlencoded` body (spaces as
/// `%20`, which every form parser accepts).
///
/// ```
/// use mediaparse_sdk::encode::query;
/// assert_eq!(query(&[("q", "a b"), ("id", "1")]), "q=a%20b&id=1");
/// ```
pub fn query<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", strict(k.as_ref()), strict(v.as_ref())))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ascii_byte_matches_the_javascript_tables() {
        for b in 0u8..128 {
            let s = (b as char).to_string();
            let js_keeps = b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b);
            assert_eq!(component(&s) == s, js_keeps, "{b}");
            let strict_keeps = b.is_ascii_alphanumeric() || b"-_.~".contains(&b);
            assert_eq!(strict(&s) == s, strict_keeps, "{b}");
        }
        assert_eq!(strict("中"), "%E4%B8%AD");
    }
}
