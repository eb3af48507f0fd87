//! The parse request body: a JSON object with `url` and/or its alias `link`,
//! nothing else. Both present with different values, neither, wrong types,
//! or unknown members are `400 invalid_request` (read by [`super::extract::JsonBody`]).

use serde_json::Value;

use mediaparse_call::batch::{BatchItem, MAX_ITEMS};
use mediaparse_core::ErrorCode;

use super::envelope::ApiError;
use super::extract::FromJson;

/// The input of a parse: the trimmed `url` (or `link`).
#[derive(Debug)]
pub struct ParseInput(pub String);

impl FromJson for ParseInput {
    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_input(bytes).map(ParseInput)
    }
}

pub fn parse_input(bytes: &[u8]) -> Result<String, ApiError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid_request(format!("body is not valid JSON: {e}")))?;
    let Value::Object(members) = value else {
        return Err(ApiError::invalid_request(
            "body must be a JSON object with `url` or `link`",
        ));
    };
    input_of(&members)
}

/// The input an object of `url` and/or `link` (and nothing else) names.
pub fn input_of(members: &serde_json::Map<String, Value>) -> Result<String, ApiError> {
    let mut url = None;
    let mut link = None;
    for (name, value) in members {
        let slot = match name.as_str() {
            "url" => &mut url,
            "link" => &mut link,
            other => {
                return Err(ApiError::invalid_request(format!(
                    "unknown property `{other}`; only `url` and `link` are accepted"
                )));
            }
        };
        match value {
            Value::String(s) => *slot = Some(s.as_str()),
            _ => {
                return Err(ApiError::invalid_request(format!(
                    "`{name}` must be a string"
                )));
            }
        }
    }
    let input = match (url, link) {
        (Some(u), Some(l)) if u.trim() != l.trim() => {
            return Err(ApiError::invalid_request(
                "`url` and `link` are both given with different values; send one",
            ));
        }
        (Some(u), _) => u,
        (None, Some(l)) => l,
        (None, None) => {
            return Err(ApiError::invalid_request(
                "body needs `url` (or its alias `link`)",
            ));
        }
    };
    if input.trim().is_empty() {
        return Err(ApiError::invalid_request("`url` must not be empty"));
    }
    Ok(input.trim().to_string())
}

/// A batch body: `{"items":[…]}` and nothing else.
#[derive(Debug)]
pub struct BatchInput(pub Vec<BatchItem>);

/// The longest input (URL or share text) a single parse takes, in bytes.
pub const MAX_INPUT_BYTES: usize = 4096;

/// The body cap of a batch: room for every item at the longest input a
/// single parse takes and its JSON.
pub const MAX_BATCH_BODY_BYTES: usize = MAX_ITEMS * (MAX_INPUT_BYTES + 512);

impl FromJson for BatchInput {
    fn max_bytes(service_cap: usize) -> usize {
        service_cap.max(MAX_BATCH_BODY_BYTES)
    }

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| ApiError::invalid_request(format!("body is not valid JSON: {e}")))?;
        let Value::Object(members) = value else {
            return Err(ApiError::invalid_request(
                "body must be a JSON object with `items`",
            ));
        };
        if let Some(other) = members.keys().find(|k| *k != "items") {
            return Err(ApiError::invalid_request(format!(
                "unknown property `{other}`; only `items` is accepted"
            )));
        }
        let items = members
            .get("items")
            .ok_or_else(|| ApiError::invalid_request("body needs `items`"))?;
        batch_items(items).map(BatchInput)
    }
}

/// A job body: a batch's `items` and an optional `callback_url`
/// (checked by the handler against the webhook destination rules).
#[derive(Debug)]
pub struct JobInput {
    pub items: Vec<BatchItem>,
    pub callback_url: Option<String>,
}

impl FromJson for JobInput {
    fn max_bytes(service_cap: usize) -> usize {
        service_cap.max(MAX_BATCH_BODY_BYTES + 4096)
    }

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| ApiError::invalid_request(format!("body is not valid JSON: {e}")))?;
        let Value::Object(members) = value else {
            return Err(ApiError::invalid_request(
                "body must be a JSON object with `items`",
            ));
        };
        if let Some(other) = members
            .keys()
            .find(|k| *k != "items" && *k != "callback_url")
        {
            return Err(ApiError::invalid_request(format!(
                "unknown property `{other}`; only `items` and `callback_url` are accepted"
            )));
        }
        let callback_url = match members.get("callback_url") {
            None | Some(Value::Null) => None,
            Some(Value::String(u)) => Some(u.clone()),
            Some(_) => {
                return Err(ApiError::invalid_request("`callback_url` must be a string"));
            }
        };
        let items = members
            .get("items")
            .ok_or_else(|| ApiError::invalid_request("body needs `items`"))?;
        Ok(JobInput {
            items: batch_items(items)?,
            callback_url,
        })
    }
}

/// A batch's `items`: an array of 1 to [`MAX_ITEMS`] objects, each with
/// `url` (or `link`) as a single parse takes it and an optional `platform`.
pub fn batch_items(items: &Value) -> Result<Vec<BatchItem>, ApiError> {
    let Value::Array(items) = items else {
        return Err(ApiError::invalid_request("`items` must be an array"));
    };
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(ApiError::new(
            ErrorCode::InvalidBatchSize,
            format!(
                "a batch holds 1 to {MAX_ITEMS} items; this one has {}",
                items.len()
            ),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = |e: ApiError| ApiError::invalid_request(format!("items[{i}]: {}", e.msg));
            let Value::Object(members) = item else {
                return Err(at(ApiError::invalid_request(
                    "must be an object with `url` or `link`",
                )));
            };
            let mut members = members.clone();
            let platform = match members.remove("platform") {
                None | Some(Value::Null) => None,
                Some(Value::String(p)) => Some(p),
                Some(_) => {
                    return Err(at(ApiError::invalid_request("`platform` must be a string")));
                }
            };
            let input = input_of(&members).map_err(at)?;
            // As the single parse answers an input this long (`302`), but
            // for the whole request: nothing is queued or run.
            if input.len() > MAX_INPUT_BYTES {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedUrl,
                    format!("items[{i}]: input longer than {MAX_INPUT_BYTES} bytes"),
                ));
            }
            Ok(BatchItem { input, platform })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_input;

    fn code(body: &str) -> Result<String, &'static str> {
        parse_input(body.as_bytes()).map_err(|e| e.wire())
    }

    #[test]
    fn url_link_rules() {
        assert_eq!(code(r#"{"url":"https://a/b"}"#).unwrap(), "https://a/b");
        assert_eq!(code(r#"{"link":" https://a/b "}"#).unwrap(), "https://a/b");
        assert_eq!(
            code(r#"{"url":"https://a/b","link":"https://a/b"}"#).unwrap(),
            "https://a/b"
        );
        for bad in [
            r#"{"url":"https://a/b","link":"https://a/c"}"#,
            r#"{}"#,
            r#"{"url":""}"#,
            r#"{"url":"x","extra":1}"#,
            r#"{"url":5}"#,
            r#"["https://a"]"#,
            r#"not json"#,
            r#"{"url":"\ud800"}"#,
        ] {
            assert_eq!(code(bad), Err("invalid_request"), "{bad}");
        }
    }
}
