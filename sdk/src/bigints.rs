//! Ids above 2^53 lose precision in JavaScript clients: platform data keeps
//! them exact by turning such integers into strings (SPEC.md: large numeric
//! identifiers are kept as strings). The SDK's serde_json keeps numbers as
//! text, so the digits are exactly the upstream's.

use serde_json::Value;

/// The largest integer every JSON reader represents exactly (2^53).
pub const MAX_SAFE: u64 = 1 << 53;

/// True when `number` is an integer whose magnitude is above 2^53.
pub fn is_large_integer(number: &serde_json::Number) -> bool {
    let text = number.to_string();
    let digits = text.strip_prefix('-').unwrap_or(&text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    digits.len() > 16 || digits.parse::<u64>().map_or(true, |n| n > MAX_SAFE)
}

/// Recursively replace every integer above 2^53 (in magnitude) by its
/// decimal string. Floats and small integers stay numbers.
pub fn stringify_large_integers(value: &mut Value) {
    match value {
        Value::Number(n) if is_large_integer(n) => *value = Value::String(n.to_string()),
        Value::Array(items) => items.iter_mut().for_each(stringify_large_integers),
        Value::Object(members) => members.values_mut().for_each(stringify_large_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_integers_become_exact_strings() {
        let mut v: Value = serde_json::from_str(
            r#"{"id":6349548387310305537,"n":-6349548387310305537,"small":9007199254740992,
               "over":9007199254740993,"f":1.5e300,"list":[7305827432509082913,1],"s":"x"}"#,
        )
        .unwrap();
        stringify_large_integers(&mut v);
        assert_eq!(v["id"], "6349548387310305537");
        assert_eq!(v["n"], "-6349548387310305537");
        assert!(v["small"].is_number());
        assert_eq!(v["over"], "9007199254740993");
        assert!(v["f"].is_number());
        assert_eq!(v["list"][0], "7305827432509082913");
        assert!(v["list"][1].is_number());
    }
}
