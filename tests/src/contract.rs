//! The contract: every response the end-to-end suite receives from a
//! documented operation is validated against the committed OpenAPI document
//! (`docs/openapi.json`, itself checked against the generated one): the status
//! must be documented, required headers present and of their schema, and the
//! JSON body valid under the response schema (JSON Schema 2020-12, formats
//! checked).
//!
//! Use [`read`] on each `reqwest::Response` of a test; it panics with the
//! violations. Undocumented paths (`/mcp`, `/docs`, an unknown URL) are
//! counted as skipped, not checked.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::paths;

struct Contract {
    doc: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

static CONTRACT: LazyLock<Contract> = LazyLock::new(|| {
    let path = paths::workspace_root().join("docs/openapi.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    Contract {
        doc: serde_json::from_str(&text).expect("docs/openapi.json is JSON"),
        validators: Mutex::new(HashMap::new()),
    }
});

/// Responses validated / skipped (undocumented path) so far in this process.
pub static CHECKED: AtomicUsize = AtomicUsize::new(0);
pub static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// What [`check`] did with a response.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Valid,
    /// The path or method is not in the document.
    Undocumented,
}

/// Read a response, validate it against the document, and return its parts.
/// Panics when the response breaks the contract.
pub async fn read(method: &str, response: reqwest::Response) -> (u16, HeaderMap, Vec<u8>) {
    let status = response.status().as_u16();
    let path = response.url().path().to_string();
    let headers = response.headers().clone();
    let body = response
        .bytes()
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    if let Err(problem) = check(method, &path, status, &headers, &body) {
        panic!(
            "{method} {path} → {status} breaks docs/openapi.json: {problem}\n    body: {}",
            String::from_utf8_lossy(&body)
                .chars()
                .take(600)
                .collect::<String>()
        );
    }
    (status, headers, body)
}

/// Validate one response; `Err` lists what is wrong.
pub fn check(
    method: &str,
    path: &str,
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Outcome, String> {
    let contract = &*CONTRACT;
    let Some(template) = find_path(&contract.doc, path) else {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
        return Ok(Outcome::Undocumented);
    };
    let method = method.to_ascii_lowercase();
    let operation = &contract.doc["paths"][&template][&method];
    if !operation.is_object() {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
        return Ok(Outcome::Undocumented);
    }
    let responses = &operation["responses"];
    let status_key = status.to_string();
    let documented = if responses[&status_key].is_object() {
        &responses[&status_key]
    } else if responses["default"].is_object() {
        &responses["default"]
    } else {
        return Err(format!(
            "status {status} is not documented for {method} {template}"
        ));
    };
    let mut problems = Vec::new();
    if let Some(documented_headers) = documented["headers"].as_object() {
        for (name, spec) in documented_headers {
            match headers.get(name.as_str()).and_then(|v| v.to_str().ok()) {
                None if spec["required"] == true => {
                    problems.push(format!("required header {name} missing"))
                }
                None => {}
                Some(raw) => {
                    let value = match spec["schema"]["type"].as_str() {
                        Some("integer") => raw
                            .parse::<i64>()
                            .map(Value::from)
                            .unwrap_or(Value::String(raw.into())),
                        _ => Value::String(raw.into()),
                    };
                    let key = format!("{template} {method} {status_key} header {name}");
                    let validator = contract.validator(&key, &spec["schema"])?;
                    for e in validator.iter_errors(&value) {
                        problems.push(format!("header {name}: {raw:?}: {e}"));
                    }
                }
            }
        }
    }
    if let Some(content) = documented["content"].as_object() {
        let content_type = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        match content.get(essence) {
            None => problems.push(format!(
                "content type {content_type:?} is not documented (documented: {:?})",
                content.keys().collect::<Vec<_>>()
            )),
            Some(media) => match serde_json::from_slice::<Value>(body) {
                Err(e) => problems.push(format!("body is not JSON: {e}")),
                Ok(instance) => {
                    let key = format!("{template} {method} {status_key} {essence}");
                    let validator = contract.validator(&key, &media["schema"])?;
                    for e in validator.iter_errors(&instance).take(10) {
                        problems.push(format!("at {}: {e}", e.instance_path()));
                    }
                }
            },
        }
    }
    if problems.is_empty() {
        CHECKED.fetch_add(1, Ordering::Relaxed);
        Ok(Outcome::Valid)
    } else {
        Err(problems.join("; "))
    }
}

impl Contract {
    fn validator(&self, key: &str, schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
        let mut cache = self
            .validators
            .lock()
            .map_err(|_| "validator cache poisoned".to_string())?;
        if let Some(v) = cache.get(key) {
            return Ok(v.clone());
        }
        // The schema's `#/components/...` references resolve against a root
        // that carries the document's components beside the schema.
        let mut root = match schema {
            Value::Object(map) => map.clone(),
            _ => return Err(format!("{key}: schema is not an object")),
        };
        root.insert("components".into(), self.doc["components"].clone());
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&Value::Object(root))
            .map_err(|e| format!("{key}: the document's schema does not compile: {e}"))?;
        let validator = Arc::new(validator);
        cache.insert(key.to_string(), validator.clone());
        Ok(validator)
    }
}

/// The document's path for a request path: an exact path first, then a
/// templated one (`{name}` matches one segment).
fn find_path(doc: &Value, path: &str) -> Option<String> {
    let paths = doc["paths"].as_object()?;
    if paths.contains_key(path) {
        return Some(path.to_string());
    }
    let segments: Vec<&str> = path.split('/').collect();
    paths
        .keys()
        .find(|template| {
            let parts: Vec<&str> = template.split('/').collect();
            parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(t, s)| {
                    (t.starts_with('{') && t.ends_with('}') && !s.is_empty()) || t == s
                })
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_validator_catches_what_it_should() {
        let ok = headers(&[
            ("content-type", "application/json"),
            ("x-request-id", "req_1"),
            ("x-credits-charged", "0"),
        ]);
        let envelope = br#"{"status":401,"data":null,"msg":"Unauthorized","code":"missing_token"}"#;
        assert_eq!(
            check("POST", "/api/v1/parse", 401, &ok, envelope),
            Ok(Outcome::Valid)
        );
        // A code that does not belong to the status.
        let wrong = br#"{"status":401,"data":null,"msg":"x","code":"payload_too_large"}"#;
        assert!(check("POST", "/api/v1/parse", 401, &ok, wrong).is_err());
        // The charge header is required.
        let no_charge = headers(&[("content-type", "application/json"), ("x-request-id", "r")]);
        assert!(check("POST", "/api/v1/parse", 401, &no_charge, envelope).is_err());
        // An undocumented status.
        assert!(check("POST", "/api/v1/parse", 418, &ok, envelope).is_err());
        // Media items allow no other properties, and URLs must be URIs.
        let media = |image: &str| {
            format!(
                r#"{{"status":200,"msg":"success","data":{{"platform":"tiktok","title":"","thumbnail":"","duration":0,"images":[{image}],"videos":[],"audios":[]}}}}"#
            )
        };
        let good = media(r#"{"url":"https://p.example/a.jpg","width":1,"height":2}"#);
        assert_eq!(
            check("POST", "/api/v1/parse", 200, &ok, good.as_bytes()),
            Ok(Outcome::Valid)
        );
        let extra = media(r#"{"url":"https://p.example/a.jpg","width":1,"height":2,"x":1}"#);
        assert!(check("POST", "/api/v1/parse", 200, &ok, extra.as_bytes()).is_err());
        let relative = media(r#"{"url":"a.jpg","width":1,"height":2}"#);
        assert!(check("POST", "/api/v1/parse", 200, &ok, relative.as_bytes()).is_err());
        // The templated platform path, and listed platformData members.
        let platform = |data: &str| {
            format!(
                r#"{{"status":200,"msg":"success","data":{{"media":{{"platform":"weibo","title":"","thumbnail":"","duration":0,"images":[],"videos":[],"audios":[]}},"platformData":{data},"platformDataVersion":"1"}}}}"#
            )
        };
        let full = r#"{"id":"1","mid":"1","mblogid":"a","text_raw":"","user":{},"pics":[],"page_info":{},"video_details_url":"","extra":true}"#;
        assert_eq!(
            check(
                "POST",
                "/api/v1/platforms/weibo/parse",
                200,
                &ok,
                platform(full).as_bytes()
            ),
            Ok(Outcome::Valid)
        );
        let missing = r#"{"id":"1"}"#;
        assert!(
            check(
                "POST",
                "/api/v1/platforms/weibo/parse",
                200,
                &ok,
                platform(missing).as_bytes()
            )
            .is_err()
        );
        assert_eq!(
            check("GET", "/mcp", 200, &ok, b""),
            Ok(Outcome::Undocumented)
        );
        assert_eq!(
            find_path(&CONTRACT.doc, "/api/v1/platforms/nope/parse").as_deref(),
            Some("/api/v1/platforms/{platform}/parse")
        );
    }
}
