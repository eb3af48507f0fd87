//! Platform data as JSON text, written without building a `Value` tree.
//!
//! The host receives platform data as JSON text and cleans it as text, so
//! an extractor need not build a tree only to have it written out again:
//! an [`ObjectWriter`] copies members of the upstream document as their raw
//! text (`&RawValue` borrowed from the page, see [`crate::fields`]) and
//! writes the members the extractor computes.
//!
//! ```
//! use mediaparse_sdk::fields::{self, RawValue, Text};
//! use mediaparse_sdk::platform_data::ObjectWriter;
//!
//! #[derive(serde::Deserialize)]
//! struct Page<'a> {
//!     #[serde(borrow)]
//!     item: &'a RawValue,
//! }
//! #[derive(serde::Deserialize)]
//! struct Item<'a> {
//!     #[serde(borrow)]
//!     id: Text<'a>,
//!     #[serde(borrow)]
//!     stats: Option<&'a RawValue>,
//! }
//!
//! let text = r#"{"item":{"id":7305827432509082913,"stats":{"plays":10},"desc":"a\u002fb"}}"#;
//! let page: Page = fields::from_text(text, "the page").unwrap();
//! let item: Item = fields::from_text(page.item.get(), "the item").unwrap();
//! let mut data = ObjectWriter::new();
//! data.str("aweme_id", item.id.as_str());
//! if let Some(stats) = item.stats {
//!     data.raw("statistics", stats);
//! }
//! data.value("images", &[] as &[u8]);
//! data.rest_of(page.item).unwrap(); // every other member, as the page wrote it
//! let data = data.finish("example");
//! assert_eq!(
//!     data.as_str(),
//!     r#"{"aweme_id":"7305827432509082913","statistics":{"plays":10},"images":[],"id":7305827432509082913,"stats":{"plays":10},"desc":"a\u002fb"}"#
//! );
//! assert_eq!(data.to_value()["desc"], "a/b");
//! ```

use std::borrow::Cow;

use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::Failure;
use crate::fields::Object;
use crate::spec::Kind;

/// The platform data of an extraction: the text of a JSON object. The host
/// sanitizes it (DESIGN.md §8) before it reaches an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformData(String);

impl PlatformData {
    /// The text of a `Value` (for extractors that build a tree).
    pub fn from_value(value: &Value) -> PlatformData {
        PlatformData(value.to_string())
    }

    /// JSON text as it came from a guest; refused unless it is JSON.
    pub fn from_json(text: String) -> Result<PlatformData, serde_json::Error> {
        serde_json::from_str::<de::IgnoredAny>(&text)?;
        Ok(PlatformData(text))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The JSON text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The data as a tree (tests, fixture checks); `null` if the text is
    /// not JSON.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or_default()
    }
}

impl Default for PlatformData {
    /// An empty object.
    fn default() -> PlatformData {
        PlatformData("{}".into())
    }
}

impl From<Value> for PlatformData {
    fn from(value: Value) -> PlatformData {
        PlatformData::from_value(&value)
    }
}

impl From<serde_json::Map<String, Value>> for PlatformData {
    fn from(members: serde_json::Map<String, Value>) -> PlatformData {
        PlatformData::from(Value::Object(members))
    }
}

/// Reads any JSON value's text (an answer read whole as the platform data).
impl<'de> Deserialize<'de> for PlatformData {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PlatformData, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(PlatformData(String::from(Box::<str>::from(raw))))
    }
}

/// A JSON object written member by member. A name is written once: a
/// member whose name was already written is left out (so computed members
/// written first take precedence over the upstream ones [`Self::rest_of`]
/// copies after them).
#[derive(Debug)]
pub struct ObjectWriter<'a> {
    out: String,
    names: Vec<Cow<'a, str>>,
}

impl Default for ObjectWriter<'_> {
    fn default() -> Self {
        ObjectWriter::new()
    }
}

impl<'a> ObjectWriter<'a> {
    /// An empty object.
    pub fn new() -> ObjectWriter<'a> {
        let mut out = String::with_capacity(256);
        out.push('{');
        ObjectWriter {
            out,
            names: Vec::new(),
        }
    }

    /// Was a member of this name written?
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// Start a member; false (nothing written) when the name was.
    fn name(&mut self, name: Cow<'a, str>) -> bool {
        if self.has(&name) {
            return false;
        }
        if !self.names.is_empty() {
            self.out.push(',');
        }
        write_str(&mut self.out, &name);
        self.out.push(':');
        self.names.push(name);
        true
    }

    /// A member copied as its JSON text (a subtree of the upstream
    /// document, borrowed with [`crate::fields::RawValue`]).
    pub fn raw(&mut self, name: impl Into<Cow<'a, str>>, value: &RawValue) -> &mut Self {
        if self.name(name.into()) {
            self.out.push_str(value.get());
        }
        self
    }

    /// A string member.
    pub fn str(&mut self, name: impl Into<Cow<'a, str>>, value: &str) -> &mut Self {
        if self.name(name.into()) {
            write_str(&mut self.out, value);
        }
        self
    }

    /// A member of any serializable value (a number, a list, a `Value`);
    /// `null` for a value serde_json cannot write (a map with non-string
    /// keys).
    pub fn value<T: Serialize + ?Sized>(
        &mut self,
        name: impl Into<Cow<'a, str>>,
        value: &T,
    ) -> &mut Self {
        if self.name(name.into()) {
            match serde_json::to_string(value) {
                Ok(text) => self.out.push_str(&text),
                Err(_) => self.out.push_str("null"),
            }
        }
        self
    }

    /// An object member written by `build`.
    pub fn object<'b>(
        &mut self,
        name: impl Into<Cow<'a, str>>,
        build: impl FnOnce(&mut ObjectWriter<'b>),
    ) -> &mut Self {
        if self.name(name.into()) {
            let mut inner = ObjectWriter::new();
            build(&mut inner);
            self.out.push_str(&inner.close());
        }
        self
    }

    /// Every member of the upstream object `object` (its text) whose name
    /// was not written yet, copied as its text. Not an object: an upstream
    /// change.
    pub fn rest_of(&mut self, object: &'a RawValue) -> Result<&mut Self, Failure> {
        self.rest_of_where(object, |_, _| true)
    }

    /// Every member of `object` whose name was not written yet, copied as
    /// its text; as [`Self::rest_of`], without a pass over the text (the
    /// members were found when `object` was read).
    pub fn rest_of_object(&mut self, object: &Object<'a>) -> &mut Self {
        self.rest_of_object_where(object, |_, _| true)
    }

    /// As [`Self::rest_of_object`], only the members `keep` accepts.
    pub fn rest_of_object_where(
        &mut self,
        object: &Object<'a>,
        mut keep: impl FnMut(&str, &RawValue) -> bool,
    ) -> &mut Self {
        for (name, value) in object.members() {
            if keep(name, value) {
                self.raw(name.clone(), value);
            }
        }
        self
    }

    /// As [`Self::rest_of`], only the members `keep` accepts.
    pub fn rest_of_where(
        &mut self,
        object: &'a RawValue,
        keep: impl FnMut(&str, &RawValue) -> bool,
    ) -> Result<&mut Self, Failure> {
        let members = Object::from_text(object.get(), "platform data source")?;
        Ok(self.rest_of_object_where(&members, keep))
    }

    fn close(mut self) -> String {
        self.out.push('}');
        self.out
    }

    /// The finished platform data, with `platform`'s listed members
    /// (`platform.toml`) that were not written filled with the empty value
    /// of their type ([`crate::spec::fill_missing_members`]).
    pub fn finish(mut self, platform: &str) -> PlatformData {
        for (name, kind) in crate::spec::listed_members(platform) {
            if !self.has(name) {
                self.value(*name, &kind.empty());
            }
        }
        PlatformData(self.close())
    }
}

/// Does the value `raw` have the type `kind` ([`Kind::accepts`] on text)?
///
/// ```
/// use mediaparse_sdk::platform_data::kind_accepts;
/// use mediaparse_sdk::spec::Kind;
/// let raw = |t: &str| mediaparse_sdk::fields::RawValue::from_string(t.into()).unwrap();
/// assert!(kind_accepts(Kind::Number, &raw("-1.5e3")));
/// assert!(!kind_accepts(Kind::Number, &raw("\"1\"")));
/// assert!(kind_accepts(Kind::ObjectOrString, &raw("\"{}\"")));
/// ```
pub fn kind_accepts(kind: Kind, raw: &RawValue) -> bool {
    let first = crate::fields::kind_of(raw);
    match kind {
        Kind::String => first == b'"',
        Kind::Number => first == b'-' || first.is_ascii_digit(),
        Kind::Object => first == b'{',
        Kind::Array => first == b'[',
        Kind::ObjectOrString => first == b'{' || first == b'"',
    }
}

/// Is `raw` fit to be member `name` of `platform`'s data: of its listed
/// type, or not listed?
pub fn fits_listed(platform: &str, name: &str, raw: &RawValue) -> bool {
    crate::spec::listed_members(platform)
        .iter()
        .find(|(listed, _)| *listed == name)
        .is_none_or(|(_, kind)| kind_accepts(*kind, raw))
}

/// `s` as a JSON string.
fn write_str(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        // Escaping a string cannot fail.
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_name_wins_and_escapes_are_written() {
        let upstream: &RawValue =
            serde_json::from_str(r#"{"a":1,"b\"q":[true],"c":{"d":"\u00e9"},"a":2}"#).unwrap();
        let mut w = ObjectWriter::new();
        w.str("a", "line\nbreak").object("n", |o| {
            o.value("x", &json!({"y": null}));
        });
        w.rest_of(upstream).unwrap();
        let data = w.finish("nowhere");
        assert_eq!(
            data.as_str(),
            r#"{"a":"line\nbreak","n":{"x":{"y":null}},"b\"q":[true],"c":{"d":"\u00e9"}}"#
        );
        assert_eq!(data.to_value()["c"]["d"], "é");
    }

    #[test]
    fn a_source_that_is_no_object_is_an_upstream_change() {
        let list: &RawValue = serde_json::from_str("[1]").unwrap();
        let err = ObjectWriter::new().rest_of(list).map(|_| ()).unwrap_err();
        assert_eq!(err.code(), "upstream_error");
    }

    #[test]
    fn values_and_answers_become_text() {
        assert_eq!(
            PlatformData::from(json!({"a": [1]})).as_str(),
            r#"{"a":[1]}"#
        );
        let read: PlatformData = serde_json::from_str(r#" {"a" : 1} "#).unwrap();
        assert_eq!(read.as_str(), r#"{"a" : 1}"#);
        assert!(PlatformData::from_json("{".into()).is_err());
        assert_eq!(PlatformData::default().as_str(), "{}");
    }
}
