//! Scrubbing secrets out of a recording. Every secret value found (operator
//! config, `Cookie`, `Authorization` and other token-like request headers,
//! `Set-Cookie` values, token-like members of JSON bodies) is replaced by
//! the same placeholder everywhere it occurs (URLs, headers, bodies, the
//! expected result), so the scrubbed case still replays consistently: an
//! extractor that reads a scrubbed cookie sends the scrubbed value on.

use mediaparse_sdk::Header;
use serde_json::Value;

use mediaparse_core::sanitize::is_sensitive;

/// Values shorter than this are not treated as secrets (`1`, `true`, `en`).
pub const MIN_SECRET_LEN: usize = 6;

/// The secrets learnt so far and their placeholders.
#[derive(Debug, Default)]
pub struct Scrubber {
    /// (secret, placeholder), longest secret first once [`Scrubber::text`] runs.
    secrets: Vec<(String, String)>,
}

impl Scrubber {
    pub fn new() -> Scrubber {
        Scrubber::default()
    }

    /// How many distinct secret values were found.
    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    fn learn(&mut self, value: &str) {
        let value = value.trim().trim_matches('"');
        if value.len() < MIN_SECRET_LEN
            || value.starts_with("scrubbed")
            || self.secrets.iter().any(|(s, _)| s == value)
        {
            return;
        }
        let placeholder = format!("scrubbed{}", self.secrets.len() + 1);
        self.secrets.push((value.to_string(), placeholder));
        // Longest first, so a secret that contains another is replaced whole.
        self.secrets
            .sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
    }

    /// `a=1; b=2` → learns `1` and `2` (and the whole string).
    fn learn_cookie_string(&mut self, value: &str) {
        for pair in value.split(';') {
            if let Some((_, v)) = pair.split_once('=') {
                self.learn(v);
            }
        }
    }

    /// Operator settings are secrets by definition (README: configuration file).
    pub fn learn_config(&mut self, config: &[Header]) {
        for h in config {
            if h.value.contains('=') {
                self.learn_cookie_string(&h.value);
            }
            self.learn(&h.value);
        }
    }

    /// `Cookie` pairs, `Authorization` credentials, and any header whose
    /// name says token, session, csrf, signature, … (the sanitizer's list).
    pub fn learn_request_headers(&mut self, headers: &[Header]) {
        for h in headers {
            let name = h.name.to_ascii_lowercase();
            if name == "cookie" {
                self.learn_cookie_string(&h.value);
            } else if name == "authorization" || name == "proxy-authorization" {
                match h.value.split_once(' ') {
                    Some((_scheme, credentials)) => self.learn(credentials),
                    None => self.learn(&h.value),
                }
            } else if is_sensitive(&name) {
                self.learn(&h.value);
            }
        }
    }

    /// The value of every `Set-Cookie` (its attributes are kept), and
    /// token-like response headers.
    pub fn learn_response_headers(&mut self, headers: &[Header]) {
        for h in headers {
            let name = h.name.to_ascii_lowercase();
            if name == "set-cookie" {
                let first = h.value.split(';').next().unwrap_or_default();
                if let Some((_, v)) = first.split_once('=') {
                    self.learn(v);
                }
            } else if is_sensitive(&name) {
                self.learn(&h.value);
            }
        }
    }

    /// String members with a secret-looking name in a JSON body.
    pub fn learn_json_body(&mut self, body: &[u8]) {
        if let Ok(value) = serde_json::from_slice::<Value>(body) {
            self.learn_json(&value);
        }
    }

    fn learn_json(&mut self, value: &Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    match v {
                        Value::String(s) if is_sensitive(k) => self.learn(s),
                        other => self.learn_json(other),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.learn_json(v)),
            _ => {}
        }
    }

    /// Replace every known secret in a text.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (secret, placeholder) in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), placeholder);
            }
        }
        out
    }

    /// Replace secrets in a body when it is text; binary bodies stay as they are.
    pub fn bytes(&self, body: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(body) {
            Ok(text) => self.text(text).into_bytes(),
            Err(_) => body.to_vec(),
        }
    }

    pub fn headers(&self, headers: &[Header]) -> Vec<Header> {
        headers
            .iter()
            .map(|h| Header::new(h.name.clone(), self.text(&h.value)))
            .collect()
    }

    /// Replace secrets in every string of a JSON value.
    pub fn json(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), self.json(v))).collect())
            }
            other => other.clone(),
        }
    }

    /// Is any known secret still present in this text? (A final check.)
    pub fn leaks(&self, text: &str) -> bool {
        self.secrets.iter().any(|(s, _)| text.contains(s.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced_consistently_everywhere() {
        let mut s = Scrubber::new();
        s.learn_config(&[Header::new("cookie", "SUB=operator-session-1; lang=en")]);
        s.learn_request_headers(&[
            Header::new("Authorization", "Bearer AAAA-public-but-long"),
            Header::new("x-guest-token", "1234567890"),
            Header::new("User-Agent", "Mozilla/5.0 keep me"),
        ]);
        s.learn_response_headers(&[Header::new(
            "Set-Cookie",
            "ttwid=1%7Cabcdef; Path=/; Domain=.tiktok.com",
        )]);
        s.learn_json_body(br#"{"data":{"guest_token":"987654321","title":"kept"}}"#);
        let body =
            r#"{"guest_token":"987654321","sub":"operator-session-1","ua":"Mozilla/5.0 keep me"}"#;
        let out = s.text(body);
        assert!(!s.leaks(&out), "{out}");
        assert!(out.contains("Mozilla/5.0 keep me"));
        assert_eq!(
            s.text("ttwid=1%7Cabcdef; Path=/"),
            s.text("ttwid=1%7Cabcdef; Path=/")
        );
        assert!(
            s.text("Bearer AAAA-public-but-long")
                .starts_with("Bearer scrubbed")
        );
        // Short values are not secrets: `lang=en` stays.
        assert_eq!(s.text("lang=en"), "lang=en");
        // The same secret always becomes the same placeholder.
        assert_eq!(s.text("1234567890/1234567890"), {
            let p = s.text("1234567890");
            format!("{p}/{p}")
        });
    }
}
