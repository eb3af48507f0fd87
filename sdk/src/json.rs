//! JSON clean-ups before typed reading.

use serde_json::Value;

/// A copy of `value` without its `null` members (at every depth), so that
/// `#[serde(default)]` applies to them: upstreams send `null` where a
/// struct expects an object, a list or a string.
///
/// ```
/// use mediaparse_sdk::json::without_nulls;
/// use serde_json::json;
/// assert_eq!(without_nulls(&json!({"a": null, "b": [{"c": null, "d": 1}, null]})),
///            json!({"b": [{"d": 1}, null]}));
/// ```
pub fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}
