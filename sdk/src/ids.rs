//! Lenient JSON values: platforms send the same field as a number in one
//! answer and a string in the next, or `null` where a value is usually
//! present. Use these with `#[serde(deserialize_with = "…")]` (and
//! `default`) instead of failing the whole answer.
//!
//! ```
//! use mediaparse_sdk::ids::{self, LenientId};
//! #[derive(serde::Deserialize)]
//! struct Item {
//!     id: LenientId,
//!     #[serde(default, deserialize_with = "ids::u32")]
//!     width: u32,
//!     #[serde(default, deserialize_with = "ids::f64")]
//!     duration: f64,
//!     #[serde(default, deserialize_with = "ids::maybe_u64")]
//!     size: Option<u64>,
//!     #[serde(default, deserialize_with = "ids::nullable")]
//!     tags: Vec<String>,
//! }
//! let a: Item = serde_json::from_str(r#"{"id":7305827432509082913,"width":"720","duration":"12.5","size":"99","tags":null}"#).unwrap();
//! assert_eq!((a.id.as_str(), a.width, a.duration, a.size, a.tags.len()), ("7305827432509082913", 720, 12.5, Some(99), 0));
//! let b: Item = serde_json::from_str(r#"{"id":"abc","width":-3,"duration":null,"size":"n/a"}"#).unwrap();
//! assert_eq!((b.id.as_str(), b.width, b.duration, b.size), ("abc", 0, 0.0, None));
//! ```

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An id sent as a JSON number or a string; kept as its decimal text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LenientId(pub String);

impl LenientId {
    /// The id text (empty for `null`).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for LenientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for LenientId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(LenientId(
            id_text(&Value::deserialize(d)?).unwrap_or_default(),
        ))
    }
}

/// The text of an id value: a string as is, a number in decimal; `None`
/// for anything else.
pub fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A number or numeric string as a finite, non-negative `f64`; `None` for
/// anything else.
pub fn number(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// `deserialize_with` for an id `String` sent as a number or a string.
pub fn id<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(LenientId::deserialize(d)?.0)
}

/// `deserialize_with`: number or numeric string; 0 when absent, negative or not a number.
pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(number(&Value::deserialize(d)?).unwrap_or(0.0))
}

/// `deserialize_with`: as [`f64()`], truncated; 0 when out of `u32` range.
pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = f64(d)?;
    Ok(if n < u32::MAX as f64 { n as u32 } else { 0 })
}

/// `deserialize_with`: as [`f64()`], truncated; 0 when out of `u64` range.
pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(maybe_u64(d)?.unwrap_or(0))
}

/// `deserialize_with`: a number or numeric string truncated to `u64`;
/// `None` when absent, negative or not a number.
pub fn maybe_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(whole(&Value::deserialize(d)?))
}

/// A number or numeric string as `u64`, exact for integers (sizes and ids
/// beyond 2^53 survive), fractions truncated; `None` when negative or not a
/// number.
pub fn whole(v: &Value) -> Option<u64> {
    let exact = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    exact.or_else(|| number(v).filter(|n| *n < u64::MAX as f64).map(|n| n as u64))
}

/// `deserialize_with`: `null` reads as the type's default.
pub fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
