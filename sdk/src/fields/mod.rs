//! Typed, borrowing reads of only the fields an extractor needs.
//!
//! A page's JSON is read straight from its text into `#[derive(Deserialize)]`
//! structs that name only the members the extractor uses; everything else is
//! skipped without being built. Building a whole `serde_json::Value` of a
//! page costs several times more (the workspace enables serde_json's
//! `arbitrary_precision` and `preserve_order`: every number becomes a
//! string, every object an ordered map).
//!
//! - [`from_text`]: read a struct from JSON text; a shape it does not accept
//!   is an upstream change (`upstream_changed`).
//! - [`string`]: a member read as `Value::as_str` reads it (only strings).
//! - [`at`]: a nested member of a [`RawValue`], without building anything;
//!   [`members`]: an object's members in order.
//! - [`object`], [`objects`], [`strings`]: a member (or each element of a
//!   list) read when it has the expected type, else the default, as `Value`
//!   accessors pass over a member of another type — in one pass.
//! - [`Object`]: an object's members found in one pass, for several typed
//!   reads of one object that each parse only the members they name; as a
//!   struct member ([`object_members`]) they are found in the pass that
//!   reads the struct around it.
//! - [`Text`]: a string or a number as text, borrowed from the page when it
//!   holds no escapes; ids above 2^53 keep their exact digits.
//! - [`RawValue`]: a member kept as its JSON text (`#[serde(borrow)] &'a
//!   RawValue`), to read again later, for example as the platform data.
//!
//! ```
//! use mediaparse_sdk::fields::{self, RawValue, Text};
//!
//! #[derive(serde::Deserialize)]
//! struct Page<'a> {
//!     #[serde(borrow)]
//!     id: Text<'a>,
//!     #[serde(borrow, default)]
//!     title: Text<'a>,
//!     #[serde(default, deserialize_with = "fields::u32")]
//!     width: u32,
//!     #[serde(borrow)]
//!     item: &'a RawValue,
//! }
//!
//! let text = r#"{"id":7305827432509082913,"title":"a\/b","width":"720","skipped":[1,{"x":2}],"item":{"k":[1, 2]}}"#;
//! let page: Page = fields::from_text(text, "the page data").unwrap();
//! assert_eq!(page.id.as_str(), "7305827432509082913");
//! assert_eq!(page.title.as_str(), "a/b");
//! assert_eq!(page.width, 720);
//! assert_eq!(page.item.get(), r#"{"k":[1, 2]}"#);
//!
//! let Err(err) = fields::from_text::<Page>(r#"{"id":1}"#, "the page data") else { panic!() };
//! assert_eq!(err.code(), "upstream_error");
//! assert!(err.message().starts_with("the page data is not the known JSON"));
//! ```

mod object;

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::Failure;

pub use object::{MaybeObject, Object, maybe_object, object_members};
pub use serde_json::value::RawValue;

/// Read `T` from the JSON `text`, borrowing from it where `T` asks to. A
/// text `T` does not accept is an upstream change; `what` names the text in
/// the message ("the rehydration data", "the API answer").
pub fn from_text<'a, T: Deserialize<'a>>(text: &'a str, what: &str) -> Result<T, Failure> {
    serde_json::from_str(text)
        .map_err(|e| Failure::changed(format!("{what} is not the known JSON: {e}")))
}

/// A JSON string or number as text: borrowed from the page when the string
/// holds no escapes; an integer's exact digits (ids above 2^53 too), other
/// numbers as serde_json writes them (`1.5e3` reads `1.5e+3`).
/// `null` and any other value read as empty text, so a field of this type
/// never fails the answer.
///
/// ```
/// use mediaparse_sdk::fields::{Text, from_text};
/// let ids: Vec<Text> = from_text(r#"["7305827432509082913", 7305827432509082913, 1.5e3, -2, null, true, {"a":1}, [3], "\u0041"]"#, "ids").unwrap();
/// let texts: Vec<&str> = ids.iter().map(Text::as_str).collect();
/// assert_eq!(texts, ["7305827432509082913", "7305827432509082913", "1.5e+3", "-2", "", "", "", "", "A"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Text<'a>(pub Cow<'a, str>);

impl<'a> Text<'a> {
    /// The text (empty for `null` and non-scalar values).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }

    /// The text when it is not blank.
    pub fn nonempty(&self) -> Option<&str> {
        Some(self.as_str()).filter(|s| !s.trim().is_empty())
    }

    /// As a finite, non-negative number (a number or a numeric string), the
    /// reading of [`crate::ids::number`].
    pub fn number(&self) -> Option<f64> {
        let n: f64 = self.0.trim().parse().ok()?;
        (n.is_finite() && n >= 0.0).then_some(n)
    }
}

/// The name serde_json gives a number it keeps as text
/// (`arbitrary_precision`): a one-member map holding the digits.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a number")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(v.to_string())))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Text<'de>, E> {
        Ok(Text::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(Text::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(Text::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        d.deserialize_any(TextVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'de>, A::Error> {
        // A number serde_json keeps as text arrives as `{NUMBER_TOKEN: digits}`.
        let Some(key) = map.next_key::<Cow<'de, str>>()? else {
            return Ok(Text::default());
        };
        if key == NUMBER_TOKEN {
            let digits: String = map.next_value()?;
            return Ok(Text(Cow::Owned(digits)));
        }
        map.next_value::<IgnoredAny>()?;
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text::default())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

/// `deserialize_with` for `Option<&RawValue>`: a present member's text,
/// `null` included (plain `Option` reads `null` as `None`); with
/// `#[serde(default)]`, an absent member is `None`.
///
/// ```
/// use mediaparse_sdk::fields::{self, RawValue};
/// #[derive(serde::Deserialize)]
/// struct Item<'a> {
///     #[serde(borrow, default, deserialize_with = "fields::raw")]
///     a: Option<&'a RawValue>,
///     #[serde(borrow, default, deserialize_with = "fields::raw")]
///     b: Option<&'a RawValue>,
/// }
/// let item: Item = fields::from_text(r#"{"a":null}"#, "t").unwrap();
/// assert_eq!(item.a.map(RawValue::get), Some("null"));
/// assert!(item.b.is_none());
/// ```
pub fn raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// `deserialize_with`: the member read as the struct `T` when it is an
/// object, else `T::default()` (the value skipped) — as code reading a
/// `Value` with `get`/`as_object` passes over a member of another type. One
/// pass, no copy; `T`'s own members should be as forgiving
/// (`#[serde(default)]`, these readers), since an error inside the object
/// is still an error. (A fractional number reaches `T` as serde_json's
/// one-member number object, which a `#[serde(default)]` struct reads as
/// its defaults.)
///
/// ```
/// use mediaparse_sdk::fields;
/// #[derive(serde::Deserialize, Default)]
/// #[serde(default)]
/// struct Set { n: u32 }
/// #[derive(serde::Deserialize)]
/// struct Item {
///     #[serde(default, deserialize_with = "fields::object")]
///     a: Set,
///     #[serde(default, deserialize_with = "fields::object")]
///     b: Set,
///     #[serde(default, deserialize_with = "fields::object")]
///     c: Set,
///     #[serde(default, deserialize_with = "fields::object")]
///     d: Set,
/// }
/// let item: Item = fields::from_text(r#"{"a":{"n":3},"b":["x"],"c":true,"d":1.5}"#, "t").unwrap();
/// assert_eq!((item.a.n, item.b.n, item.c.n, item.d.n), (3, 0, 0, 0));
/// ```
pub fn object<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    d.deserialize_any(ObjectOr(std::marker::PhantomData))
}

/// `deserialize_with`: a list whose elements are each read as [`object`]
/// reads a member (an element that is no object is `T::default()`, keeping
/// the others' positions); anything but a list is empty.
///
/// ```
/// use mediaparse_sdk::fields::{self, Text};
/// #[derive(serde::Deserialize, Default)]
/// struct Url<'a> { #[serde(borrow, default, deserialize_with = "fields::string")] url: Text<'a> }
/// #[derive(serde::Deserialize)]
/// struct Item<'a> {
///     #[serde(borrow, default, deserialize_with = "fields::objects")]
///     urls: Vec<Url<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::objects")]
///     none: Vec<Url<'a>>,
/// }
/// let item: Item = fields::from_text(r#"{"urls":[{"url":"a"},7,{"url":1},[{}]],"none":{"url":"b"}}"#, "t").unwrap();
/// let urls: Vec<&str> = item.urls.iter().map(|u| u.url.as_str()).collect();
/// assert_eq!((urls, item.none.len()), (vec!["a", "", "", ""], 0));
/// ```
pub fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    d.deserialize_any(ListOr(
        |item: ObjectElement<T>| item.0,
        std::marker::PhantomData,
    ))
}

/// `deserialize_with`: a list's string elements (`None` for an element of
/// another type, keeping the others' positions); anything but a list is
/// empty.
///
/// ```
/// use mediaparse_sdk::fields;
/// #[derive(serde::Deserialize)]
/// struct Item<'a> {
///     #[serde(borrow, default, deserialize_with = "fields::strings")]
///     a: Vec<Option<fields::Text<'a>>>,
/// }
/// let item: Item = fields::from_text(r#"{"a":["x",1,null,"y\/z"]}"#, "t").unwrap();
/// let a: Vec<Option<&str>> = item.a.iter().map(|s| s.as_ref().map(|s| s.as_str())).collect();
/// assert_eq!(a, vec![Some("x"), None, None, Some("y/z")]);
/// ```
pub fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Option<Text<'de>>>, D::Error> {
    d.deserialize_any(ListOr(
        |item: StringOrNone<'de>| item.0,
        std::marker::PhantomData,
    ))
}

/// Drain a map or a list of values nobody reads.
fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Answers `default()` for every value but the one kind a reader handles.
macro_rules! default_for_scalars {
    ($default:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($default)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($default)
        }
    };
}

struct ObjectOr<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ObjectOr<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    default_for_scalars!(T::default());
    fn visit_str<E: de::Error>(self, _: &str) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        skip_seq(seq)?;
        Ok(T::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

/// A list element read as [`object`] reads a member.
struct ObjectElement<T>(T);

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for ObjectElement<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(ObjectElement)
    }
}

/// A list of elements `E`, each turned into a `T` by the function; any
/// other value is an empty list.
struct ListOr<El, T, F>(F, std::marker::PhantomData<fn(El) -> T>);

impl<'de, El, T, F> Visitor<'de> for ListOr<El, T, F>
where
    El: Deserialize<'de>,
    F: Fn(El) -> T,
{
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    default_for_scalars!(Vec::new());
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<T>, A::Error> {
        skip_map(map)?;
        Ok(Vec::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element::<El>()? {
            out.push((self.0)(item));
        }
        Ok(out)
    }
}

/// A string, or `None` for any other value.
struct StringOrNone<'a>(Option<Text<'a>>);

impl<'de> Deserialize<'de> for StringOrNone<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StringOrNone<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            default_for_scalars!(StringOrNone(None));
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(StringOrNone(Some(Text(Cow::Borrowed(v)))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StringOrNone(Some(Text(Cow::Owned(v.to_string())))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(StringOrNone(Some(Text(Cow::Owned(v)))))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                skip_seq(seq)?;
                Ok(StringOrNone(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                skip_map(map)?;
                Ok(StringOrNone(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// The members of the object `raw` in order, each as its text (names
/// borrowed when they hold no escapes); `None` when `raw` is no object.
///
/// ```
/// use mediaparse_sdk::fields::{self, RawValue};
/// let raw: &RawValue = fields::from_text(r#"{"a":1,"b":{"c":[2]}}"#, "t").unwrap();
/// let members = fields::members(raw).unwrap();
/// assert_eq!(members[1].0, "b");
/// assert_eq!(members[1].1.get(), r#"{"c":[2]}"#);
/// assert!(fields::members(members[0].1).is_none());
/// ```
pub fn members(raw: &RawValue) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    Object::of(raw).map(Object::into_members)
}

/// The first byte of a value's text: `"` a string, `{` an object, `[` an
/// array, `n` null, `t`/`f` a boolean, anything else a number.
pub fn kind_of(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b'n')
}

/// `deserialize_with`: a number or numeric string as `f64`; 0 when absent,
/// negative or not a number (as [`crate::ids::f64()`], without building a
/// `Value`).
pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Text::deserialize(d)?.number().unwrap_or(0.0))
}

/// `deserialize_with`: as [`f64()`], truncated; 0 when out of `u32` range.
pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = f64(d)?;
    Ok(if n < u32::MAX as f64 { n as u32 } else { 0 })
}

/// `deserialize_with`: an id sent as a number or a string, as its text
/// (empty for anything else), as [`crate::ids::id()`].
pub fn id<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Text::deserialize(d)?.into_string())
}

/// `deserialize_with`: a JSON string as [`Text`]; any other value (a
/// number, `null`, an object) reads as empty text, as
/// `value.as_str().unwrap_or_default()` reads a `Value`.
///
/// ```
/// use mediaparse_sdk::fields::{self, Text};
/// #[derive(serde::Deserialize)]
/// struct Item<'a> {
///     #[serde(borrow, deserialize_with = "fields::string")]
///     a: Text<'a>,
///     #[serde(borrow, deserialize_with = "fields::string")]
///     b: Text<'a>,
/// }
/// let item: Item = fields::from_text(r#"{"a":"x\u0041","b":12}"#, "t").unwrap();
/// assert_eq!((item.a.as_str(), item.b.as_str()), ("xA", ""));
/// ```
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Text<'de>, D::Error> {
    Ok(StringOrNone::deserialize(d)?.0.unwrap_or_default())
}

/// The member `path` of `raw` (nested objects, one name a level), as
/// `Value::pointer` finds it: `None` when a level is not an object or has
/// no such member; of a name given twice, the last. Only the members on
/// the way are read, nothing is built.
///
/// ```
/// use mediaparse_sdk::fields::{self, RawValue};
/// let raw: &RawValue =
///     fields::from_text(r#"{"a":{"b":[1],"c":{"d":null}},"a2":1,"\u0065":1,"e":2}"#, "t").unwrap();
/// assert_eq!(fields::at(Some(raw), &["e"]).map(RawValue::get), Some("2"));
/// assert_eq!(fields::at(Some(raw), &["a", "b"]).map(RawValue::get), Some("[1]"));
/// assert_eq!(fields::at(Some(raw), &["a", "c", "d"]).map(RawValue::get), Some("null"));
/// assert!(fields::at(Some(raw), &["a", "b", "0"]).is_none());
/// assert!(fields::at(Some(raw), &["x"]).is_none());
/// ```
pub fn at<'a>(raw: Option<&'a RawValue>, path: &[&str]) -> Option<&'a RawValue> {
    let raw = raw?;
    if path.is_empty() {
        return Some(raw);
    }
    if kind_of(raw) != b'{' {
        return None;
    }
    // One pass down the path: each level passes over the members it does
    // not want and descends into the one it does, in the same read.
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de::DeserializeSeed::deserialize(Path(path), &mut de)
        .ok()
        .flatten()
}

/// The rest of a path (never empty) below the value being read.
struct Path<'p>(&'p [&'p str]);

impl<'de> de::DeserializeSeed<'de> for Path<'_> {
    type Value = Option<&'de RawValue>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Path<'_> {
    type Value = Option<&'de RawValue>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    default_for_scalars!(None);
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_seq(seq)?;
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some((name, rest)) = self.0.split_first() else {
            skip_map(map)?;
            return Ok(None);
        };
        // Of a name given twice, the last decides, as `Value::pointer` reads.
        let mut found = None;
        while let Some(is_it) = map.next_key_seed(KeyIs(name))? {
            if !is_it {
                map.next_value::<IgnoredAny>()?;
            } else if rest.is_empty() {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                found = map.next_value_seed(Path(rest))?;
            }
        }
        Ok(found)
    }
}

/// Compares a member name without keeping it.
struct KeyIs<'n>(&'n str);

impl<'de> de::DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids;

    #[test]
    fn numbers_read_as_the_value_based_helpers_read_them() {
        #[derive(serde::Deserialize)]
        struct Fast {
            #[serde(deserialize_with = "f64")]
            f: f64,
            #[serde(deserialize_with = "u32")]
            u: u32,
            #[serde(deserialize_with = "id")]
            i: String,
        }
        #[derive(serde::Deserialize)]
        struct Slow {
            #[serde(deserialize_with = "ids::f64")]
            f: f64,
            #[serde(deserialize_with = "ids::u32")]
            u: u32,
            #[serde(deserialize_with = "ids::id")]
            i: String,
        }
        for v in [
            "12",
            "\"12\"",
            "\" 7.5 \"",
            "-3",
            "1.5e3",
            "1e400",
            "null",
            "true",
            "\"NaN\"",
            "\"inf\"",
            "[1]",
            "{\"a\":1}",
            "4294967296",
            "7305827432509082913",
            "\"x\"",
        ] {
            let text = format!(r#"{{"f":{v},"u":{v},"i":{v}}}"#);
            let fast: Fast = from_text(&text, "t").unwrap();
            let slow: Slow = serde_json::from_str(&text).unwrap();
            assert_eq!(
                (fast.f.to_bits(), fast.u, &fast.i),
                (slow.f.to_bits(), slow.u, &slow.i),
                "{v}"
            );
        }
    }

    /// `at` by building the tree: each level an object's member, the last
    /// of a name given twice.
    fn at_by_tree(text: &str, path: &[&str]) -> Option<serde_json::Value> {
        let mut here: serde_json::Value = serde_json::from_str(text).ok()?;
        for name in path {
            here = here.as_object()?.get(*name)?.clone();
        }
        Some(here)
    }

    fn object_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just("null".to_string()),
            "-?[1-9][0-9]{0,3}",
            "\"[a-c]{0,3}\"",
        ];
        let value = leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec(
                    (prop::sample::select(vec!["a", "b", "\\u0061"]), inner),
                    0..4
                )
                .prop_map(|members| {
                    let members: Vec<String> = members
                        .iter()
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        });
        prop::collection::vec((prop::sample::select(vec!["a", "b"]), value), 0..4).prop_map(
            |members| {
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\" : {v}"))
                    .collect();
                format!("{{{}}}", members.join(","))
            },
        )
    }

    proptest::proptest! {
        #[test]
        fn at_finds_what_the_tree_finds(text in object_text(), path in proptest::collection::vec(proptest::sample::select(vec!["a", "b"]), 0..4)) {
            let raw: &RawValue = serde_json::from_str(&text).unwrap();
            let found = at(Some(raw), &path).map(|r| serde_json::from_str::<serde_json::Value>(r.get()).unwrap());
            proptest::prop_assert_eq!(found, at_by_tree(&text, &path), "{} {:?}", text, path);
        }
    }

    #[test]
    fn unescaped_strings_are_borrowed() {
        let texts: Vec<Text> = from_text(r#"["plain", "esc\u002Fape"]"#, "t").unwrap();
        assert!(matches!(texts[0].0, Cow::Borrowed("plain")));
        assert_eq!(texts[1].as_str(), "esc/ape");
    }
}
