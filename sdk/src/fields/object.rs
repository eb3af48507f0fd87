//! An object's members, found in one pass over its text, for several
//! typed reads of the same object.
//!
//! Reading a struct straight from an object's text passes over every
//! member the struct does not name, byte by byte; a second struct read
//! from the same text passes over them all again. [`Object`] finds the
//! members once, each as its text; a struct read from it then parses only
//! the members it names, and members it does not name cost nothing.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};

use super::{RawValue, Text};
use crate::Failure;

/// The name serde_json's `RawValue` asks a deserializer for.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// A JSON object's members in order, each as its name and its text.
///
/// ```
/// use mediaparse_sdk::fields::{self, Object, RawValue, Text};
/// #[derive(serde::Deserialize)]
/// struct Media<'a> { #[serde(borrow)] title: Text<'a>, #[serde(default)] width: u32 }
/// #[derive(serde::Deserialize)]
/// struct Data<'a> { #[serde(borrow)] id: Text<'a>, #[serde(borrow)] video: &'a RawValue }
///
/// let text = r#"{"id":7,"title":"a\/b","video":{"w":[1]},"width":720,"big":[1,2,3]}"#;
/// let item = Object::from_text(text, "the item").unwrap();
/// let media: Media = item.read("the item").unwrap();
/// let data: Data = item.read("the item").unwrap();
/// assert_eq!((media.title.as_str(), media.width), ("a/b", 720));
/// assert_eq!((data.id.as_str(), data.video.get()), ("7", r#"{"w":[1]}"#));
/// assert_eq!(item.get("big").map(RawValue::get), Some("[1,2,3]"));
/// assert!(Object::from_text("[1]", "the item").is_err());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
}

impl<'a> Object<'a> {
    /// The object `text` holds; an upstream change when it is no JSON
    /// object (`what` names it in the message).
    pub fn from_text(text: &'a str, what: &str) -> Result<Object<'a>, Failure> {
        serde_json::from_str::<MembersOf>(text)
            .map(|m| Object { members: m.0 })
            .map_err(|e| Failure::changed(format!("{what} is not a JSON object: {e}")))
    }

    /// The members of `raw`; `None` when it is no object.
    pub fn of(raw: &'a RawValue) -> Option<Object<'a>> {
        if super::kind_of(raw) != b'{' {
            return None;
        }
        serde_json::from_str::<MembersOf>(raw.get())
            .ok()
            .map(|m| Object { members: m.0 })
    }

    /// Read `T` from the members, as from the object's text: only the
    /// members `T` names are parsed. A shape `T` does not accept is an
    /// upstream change.
    pub fn read<T: Deserialize<'a>>(&self, what: &str) -> Result<T, Failure> {
        T::deserialize(Members(self))
            .map_err(|e| Failure::changed(format!("{what} is not the known JSON: {e}")))
    }

    /// The member `name` (of a name given twice, the last, as
    /// [`super::at`]).
    pub fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.members
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// Every member, in order.
    pub fn members(&self) -> &[(Cow<'a, str>, &'a RawValue)] {
        &self.members
    }

    /// Every member, in order, owned.
    pub fn into_members(self) -> Vec<(Cow<'a, str>, &'a RawValue)> {
        self.members
    }
}

/// An object read where it stands, in the pass over the text around it:
/// a struct member typed `Object` (or `Option<Object>`) costs no second
/// pass over the object, as [`Object::of`] on the member's text would.
/// Anything but an object is an error, as for any struct; see
/// [`super::object_members`] for a reader that passes over other values.
impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        MembersOf::deserialize(d).map(|m| Object { members: m.0 })
    }
}

/// A value read where it stands: its members when it is an object, else
/// which other value it is. For a struct that tells `null` from an object
/// and from anything else in the one pass over its text.
///
/// ```
/// use mediaparse_sdk::fields::{self, MaybeObject};
/// #[derive(serde::Deserialize)]
/// struct Page<'a> {
///     #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
///     a: Option<MaybeObject<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
///     b: Option<MaybeObject<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
///     c: Option<MaybeObject<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
///     absent: Option<MaybeObject<'a>>,
/// }
/// let page: Page = fields::from_text(r#"{"a":{"k":1},"b":null,"c":[2]}"#, "t").unwrap();
/// assert!(matches!(page.a, Some(MaybeObject::Object(o)) if o.get("k").is_some()));
/// assert!(matches!(page.b, Some(MaybeObject::Null)));
/// assert!(matches!(page.c, Some(MaybeObject::Other)));
/// assert!(page.absent.is_none());
/// ```
#[derive(Clone, Debug)]
pub enum MaybeObject<'a> {
    /// An object: its members.
    Object(Object<'a>),
    /// `null`.
    Null,
    /// Any other value (passed over).
    Other,
}

impl<'a> MaybeObject<'a> {
    /// The object's members, `None` for any other value.
    pub fn into_object(self) -> Option<Object<'a>> {
        match self {
            MaybeObject::Object(object) => Some(object),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MaybeObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeObject::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeObject::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeObject::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeObject::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeObject::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeObject::Null)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MaybeObject::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                super::skip_seq(seq)?;
                Ok(MaybeObject::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(16));
                if let Some(name) = map.next_key::<Text<'de>>()? {
                    // A number serde_json keeps as text arrives as a
                    // one-member map: it is no object.
                    if name.as_str() == super::NUMBER_TOKEN {
                        map.next_value::<de::IgnoredAny>()?;
                        super::skip_map(map)?;
                        return Ok(MaybeObject::Other);
                    }
                    members.push((name.0, map.next_value::<&'de RawValue>()?));
                }
                push_members(&mut map, &mut members)?;
                Ok(MaybeObject::Object(Object { members }))
            }
        }
        d.deserialize_any(V)
    }
}

/// `deserialize_with`: a present member as [`MaybeObject`], `null`
/// included (an absent one is the field's default, `None`).
pub fn maybe_object<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<MaybeObject<'a>>, D::Error> {
    MaybeObject::deserialize(d).map(Some)
}

/// `deserialize_with`: the member's own members when it is an object,
/// found in the pass that reads the struct around it (the members
/// [`Object::of`] finds on its text); `None` for any other value, which is
/// passed over.
///
/// ```
/// use mediaparse_sdk::fields::{self, Object, RawValue};
/// #[derive(serde::Deserialize)]
/// struct Page<'a> {
///     #[serde(borrow, default, deserialize_with = "fields::object_members")]
///     item: Option<Object<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::object_members")]
///     list: Option<Object<'a>>,
///     #[serde(borrow, default, deserialize_with = "fields::object_members")]
///     number: Option<Object<'a>>,
/// }
/// let page: Page =
///     fields::from_text(r#"{"item":{"id":7,"v":[1]},"list":[{}],"number":1.5}"#, "t").unwrap();
/// let item = page.item.unwrap();
/// assert_eq!(item.get("v").map(RawValue::get), Some("[1]"));
/// assert!(page.list.is_none() && page.number.is_none());
/// ```
pub fn object_members<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Object<'a>>, D::Error> {
    MaybeObject::deserialize(d).map(MaybeObject::into_object)
}

/// An object's members as its text gives them.
struct MembersOf<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for MembersOf<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MembersOf<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MembersOf<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(16));
                push_members(&mut map, &mut members)?;
                Ok(MembersOf(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// The map's (remaining) members, each as its name and its text.
fn push_members<'de, A: MapAccess<'de>>(
    map: &mut A,
    members: &mut Vec<(Cow<'de, str>, &'de RawValue)>,
) -> Result<(), A::Error> {
    while let Some(name) = map.next_key::<Text<'de>>()? {
        members.push((name.0, map.next_value::<&'de RawValue>()?));
    }
    Ok(())
}

/// The members as a deserializer: an object, whatever is asked.
struct Members<'o, 'a>(&'o Object<'a>);

impl<'a> Deserializer<'a> for Members<'_, 'a> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_map(Access {
            members: self.0.members.iter(),
            value: None,
        })
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
    }
}

/// Walks the members: each name, then its value read from its own text.
struct Access<'o, 'a> {
    members: std::slice::Iter<'o, (Cow<'a, str>, &'a RawValue)>,
    value: Option<&'a RawValue>,
}

impl<'a> MapAccess<'a> for Access<'_, 'a> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((name, value)) = self.members.next() else {
            return Ok(None);
        };
        self.value = Some(*value);
        match name {
            Cow::Borrowed(name) => seed.deserialize(BorrowedStrDeserializer::new(name)),
            Cow::Owned(name) => seed.deserialize(name.as_str().into_deserializer()),
        }
        .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a member's value is read once"))?;
        seed.deserialize(Member(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

/// One member's value: read by serde_json from its own text, except that a
/// value nobody reads is not parsed at all and a `&RawValue` is its text.
struct Member<'a>(&'a RawValue);

impl<'a> Member<'a> {
    fn read<T>(
        self,
        read: impl FnOnce(
            &mut serde_json::Deserializer<serde_json::de::StrRead<'a>>,
        ) -> Result<T, serde_json::Error>,
    ) -> Result<T, serde_json::Error> {
        read(&mut serde_json::Deserializer::from_str(self.0.get()))
    }
}

/// The requests serde_json answers on the value's text.
macro_rules! by_serde_json {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.read(|de| de.$method(visitor))
        }
    )*};
}

impl<'a> Deserializer<'a> for Member<'a> {
    type Error = serde_json::Error;

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        if self.0.get() == "null" {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if name == RAW_VALUE_TOKEN {
            return visitor.visit_map(RawMember(Some(self.0.get())));
        }
        self.read(|de| de.deserialize_newtype_struct(name, visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.read(|de| de.deserialize_unit_struct(name, visitor))
    }

    fn deserialize_tuple<V: Visitor<'a>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.read(|de| de.deserialize_tuple(len, visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.read(|de| de.deserialize_tuple_struct(name, len, visitor))
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.read(|de| de.deserialize_struct(name, fields, visitor))
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.read(|de| de.deserialize_enum(name, variants, visitor))
    }

    by_serde_json! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_unit deserialize_seq deserialize_map deserialize_identifier
    }
}

/// The one member serde_json's `RawValue` reads: its name, then the text.
struct RawMember<'a>(Option<&'a str>);

impl<'a> MapAccess<'a> for RawMember<'a> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        if self.0.is_none() {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(RAW_VALUE_TOKEN))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let text = self
            .0
            .take()
            .ok_or_else(|| de::Error::custom("a raw value is read once"))?;
        seed.deserialize(BorrowedStrDeserializer::new(text))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::fields;

    // The tests read these through `Debug` only.
    #[allow(dead_code)]
    #[derive(Deserialize, Debug, Default)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow, deserialize_with = "fields::string")]
        a: Text<'a>,
        e: Option<i64>,
    }

    /// The readers extractors use, together.
    #[allow(dead_code)]
    #[derive(Deserialize, Debug)]
    struct Shape<'a> {
        #[serde(borrow, default)]
        a: Text<'a>,
        #[serde(borrow, default)]
        b: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "fields::raw")]
        g: Option<&'a RawValue>,
        #[serde(borrow, default, deserialize_with = "fields::objects")]
        c: Vec<Inner<'a>>,
        #[serde(borrow, default, deserialize_with = "fields::strings")]
        d: Vec<Option<Text<'a>>>,
        #[serde(default)]
        e: Option<u64>,
        #[serde(borrow, default, deserialize_with = "fields::object")]
        f: Inner<'a>,
        #[serde(default, deserialize_with = "fields::u32")]
        x: u32,
        #[serde(default)]
        y: Option<Vec<Option<String>>>,
        #[serde(default)]
        z: Option<Either>,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, Debug)]
    #[serde(untagged)]
    enum Either {
        Url(String),
        List(Vec<Option<String>>),
        Other(serde::de::IgnoredAny),
    }

    /// The member names in order, duplicates kept, as serde_json reads them.
    fn name_list(text: &str) -> Vec<String> {
        struct Names;
        impl<'de> Visitor<'de> for Names {
            type Value = Vec<String>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    names.push(name);
                }
                Ok(names)
            }
        }
        serde_json::Deserializer::from_str(text)
            .deserialize_map(Names)
            .unwrap()
    }

    /// Reading from the members gives what reading the text gives.
    fn same(text: &str) {
        let direct = match fields::from_text::<Shape>(text, "t") {
            Ok(v) => format!("ok {v:?}"),
            Err(_) => "error".to_string(),
        };
        let Ok(object) = Object::from_text(text, "t") else {
            return;
        };
        let via = match object.read::<Shape>("t") {
            Ok(v) => format!("ok {v:?}"),
            Err(_) => "error".to_string(),
        };
        assert_eq!(via, direct, "{text}");
        let names: Vec<&str> = object.members().iter().map(|(n, _)| n.as_ref()).collect();
        assert_eq!(names, name_list(text), "{text}");
    }

    #[test]
    fn reads_from_the_members_are_reads_from_the_text() {
        for text in [
            r#"{}"#,
            r#"{"a":"x","b":{"k":[1, 2]},"g":null,"c":[{"a":"q","e":-3},7,[]],"d":["x",1,null,"y\/z"],"e":5,"f":{"a":"w"},"x":"720","y":["u",null],"z":"s"}"#,
            r#"{"b":null,"g":null,"e":null,"y":null,"z":null}"#,
            r#"{"a":12345678901234567890123,"e":-1}"#,
            r#"{"e":1.5}"#,
            r#"{"a":"x","a":"y"}"#,
            r#"{"\u0061":"esc","zz":{"deep":[[[1]]]}}"#,
            r#"{"z":[null,"a"],"x":1e3,"f":[1]}"#,
            r#"{"z":{"o":1},"c":{"a":"b"},"d":"s"}"#,
            r#"{"y":[1]}"#,
            r#"{"c":[{"a":"q","e":"x"}]}"#,
        ] {
            same(text);
        }
        assert!(Object::from_text(r#"{"a":1} x"#, "t").is_err());
        assert!(Object::from_text(r#""text""#, "t").is_err());
        assert!(Object::of(&RawValue::from_string("[1]".into()).unwrap()).is_none());
    }

    fn value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            "-?(0|[1-9][0-9]{0,21})(\\.[0-9]{1,3})?",
            "\"[a-c /é]{0,4}(\\\\u00e9|\\\\/)?\"",
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((name(), inner), 0..4).prop_map(|members| {
                    let members: Vec<String> =
                        members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    fn name() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a", "b", "c", "d", "e", "f", "g", "x", "y", "z", "q", "\\u0061",
        ])
        .prop_map(|n| format!("\"{n}\""))
    }

    /// A member read as its members where it stands: the members
    /// [`Object::of`] finds on its own text, for objects; `None` for every
    /// other value. Read as `Object` it must be an object.
    fn found_in_place(value: &str) {
        #[derive(Deserialize)]
        struct Lenient<'a> {
            #[serde(borrow, default, deserialize_with = "fields::object_members")]
            m: Option<Object<'a>>,
            #[serde(default)]
            after: Option<u8>,
        }
        #[derive(Deserialize)]
        struct Strict<'a> {
            #[serde(borrow)]
            m: Object<'a>,
        }
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(borrow, default, deserialize_with = "fields::maybe_object")]
            m: Option<MaybeObject<'a>>,
        }
        let listed = |o: &Object| -> Vec<(String, String)> {
            o.members()
                .iter()
                .map(|(n, v)| (n.to_string(), v.get().to_string()))
                .collect()
        };
        let text = format!(r#"{{"m" : {value} , "after":1}}"#);
        let raw: &RawValue = serde_json::from_str(value).unwrap();
        let expected = Object::of(raw).map(|o| listed(&o));
        let lenient: Lenient = fields::from_text(&text, "t").unwrap();
        assert_eq!(lenient.m.as_ref().map(listed), expected, "{value}");
        assert_eq!(lenient.after, Some(1), "{value}");
        let strict = fields::from_text::<Strict>(&text, "t");
        assert_eq!(strict.ok().map(|s| listed(&s.m)), expected, "{value}");
        let kind: Kind = fields::from_text(&text, "t").unwrap();
        match kind.m {
            Some(MaybeObject::Object(o)) => assert_eq!(Some(listed(&o)), expected, "{value}"),
            Some(MaybeObject::Null) => assert_eq!(raw.get(), "null"),
            Some(MaybeObject::Other) => {
                assert!(expected.is_none() && raw.get() != "null", "{value}")
            }
            None => panic!("{value}: a present member"),
        }
    }

    #[test]
    fn members_found_in_place_are_the_members_of_the_text() {
        for value in [
            "{}",
            r#"{"a":1,"b":{"c":[1,{"d":2}]},"a":"again","\u0061":null}"#,
            "[]",
            r#"[{"a":1}]"#,
            "null",
            "true",
            r#""{}""#,
            "7",
            "-1.5e3",
            "12345678901234567890123",
        ] {
            found_in_place(value);
        }
        // A struct's absent member is `None`.
        #[derive(Deserialize)]
        struct Absent<'a> {
            #[serde(borrow, default, deserialize_with = "fields::object_members")]
            m: Option<Object<'a>>,
        }
        let absent: Absent = fields::from_text("{}", "t").unwrap();
        assert!(absent.m.is_none());
    }

    proptest! {
        #[test]
        fn generated_members_are_found_in_place(v in value()) {
            found_in_place(&v);
        }

        #[test]
        fn generated_objects_read_alike(members in prop::collection::vec((name(), value()), 0..8)) {
            let members: Vec<String> = members.iter().map(|(k, v)| format!("{k} : {v}")).collect();
            same(&format!("{{ {} }}", members.join(" , ")));
        }
    }
}
