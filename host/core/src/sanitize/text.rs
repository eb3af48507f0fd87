//! The sanitizer and the secrets' redaction on JSON text: text in, text out,
//! in one pass without building a `Value` tree.
//!
//! A `serde_json::Deserializer` reads the text and a visitor writes what it
//! meets straight into the output, applying the rules of [`super::sanitize`]
//! (sensitive members skipped, integers beyond 2^53 written as strings) or
//! of [`Secrets::redact_json`] (configured secrets masked in strings). The
//! result is byte for byte `serde_json::to_string` of the tree the same
//! rules would have produced; the rare documents where a streaming copy
//! cannot promise that (a member name given twice in one object, where the
//! tree keeps the last value at the first place; a member name holding a
//! secret, whose masked member the tree moves; serde_json's private marker
//! objects) are handed to the tree functions instead.
//!
//! What serde_json refuses is refused, with its message; nesting is bounded
//! by serde_json's recursion limit and by [`MAX_DEPTH`] here, the bound of
//! this visitor's own recursion. The size of the text is bounded by whoever
//! hands it over (the guest runtime's `max_output_bytes`).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::is_sensitive;
use crate::Secrets;

/// Nested arrays and objects at most: as many as serde_json's recursion
/// limit (128) lets a `Value` be parsed with.
pub const MAX_DEPTH: usize = 127;

/// Why JSON text was not sanitized.
#[derive(Debug, thiserror::Error)]
pub enum SanitizeError {
    #[error("not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("not a JSON object")]
    NotAnObject,
    #[error("nested deeper than {MAX_DEPTH} arrays and objects")]
    TooDeep,
}

/// `text` (JSON whose top level is an object) with sensitive members
/// removed and integers beyond 2^53 written as strings: the text of
/// [`super::sanitize`]'s tree.
pub fn sanitize(text: &str) -> Result<String, SanitizeError> {
    if !text.trim_start().starts_with('{') {
        // serde_json's verdict first: text that is not JSON says so.
        serde_json::from_str::<IgnoredAny>(text)?;
        return Err(SanitizeError::NotAnObject);
    }
    let rules = Rules {
        drop_sensitive: true,
        stringify_large: true,
        secrets: None,
    };
    let clean = pass(text, &rules, super::sanitize)?;
    // Text starting with `{` is still no object when it is one of
    // serde_json's marker objects.
    if !clean.starts_with('{') {
        return Err(SanitizeError::NotAnObject);
    }
    Ok(clean)
}

/// `text` (JSON) with every configured secret masked in its strings: the
/// text of [`Secrets::redact_json`]'s tree.
pub fn redact(text: &str, secrets: &Secrets) -> Result<String, SanitizeError> {
    let rules = Rules {
        drop_sensitive: false,
        stringify_large: false,
        secrets: Some(secrets),
    };
    pass(text, &rules, |tree| secrets.redact_json(tree))
}

/// One pass over `text`, or `on_tree` on its tree for the documents the
/// streaming copy hands over.
fn pass(
    text: &str,
    rules: &Rules,
    on_tree: impl FnOnce(&mut Value),
) -> Result<String, SanitizeError> {
    match transcode(text, rules) {
        Ok(clean) => Ok(clean),
        Err(Stop::Fallback) => {
            let mut tree: Value = serde_json::from_str(text)?;
            on_tree(&mut tree);
            Ok(tree.to_string())
        }
        Err(Stop::TooDeep) => Err(SanitizeError::TooDeep),
        Err(Stop::NotJson(e)) => Err(SanitizeError::NotJson(e)),
    }
}

/// What one pass applies.
struct Rules<'a> {
    /// Skip members whose name [`is_sensitive`].
    drop_sensitive: bool,
    /// Write integers beyond 2^53 as strings.
    stringify_large: bool,
    /// Mask these in every string.
    secrets: Option<&'a Secrets>,
}

/// Why a pass stopped before the end.
#[derive(Debug)]
enum Stop {
    /// The tree functions must answer for this text.
    Fallback,
    TooDeep,
    NotJson(serde_json::Error),
}

/// The output and the rules of one pass.
struct State<'r> {
    out: Vec<u8>,
    rules: &'r Rules<'r>,
    /// Set by the visitor when it gives up on purpose (the error it returns
    /// to serde_json only unwinds the parse).
    stop: Cell<Option<Stop>>,
}

fn transcode(text: &str, rules: &Rules) -> Result<String, Stop> {
    let mut state = State {
        // Sanitizing mostly keeps the text; big integers add two quotes.
        out: Vec::with_capacity(text.len() + text.len() / 16),
        rules,
        stop: Cell::new(None),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Node {
        st: &mut state,
        depth: 0,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    if let Some(stop) = state.stop.take() {
        return Err(stop);
    }
    parsed.map_err(Stop::NotJson)?;
    // Only whole strings (escaped by serde_json) and ASCII punctuation were
    // written: always UTF-8.
    String::from_utf8(state.out).map_err(|_| Stop::Fallback)
}

/// serde_json's name for a number it keeps as text (`arbitrary_precision`):
/// a one-member map holding the digits.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";
/// serde_json's name for a raw value (`raw_value`): a `Value` parses the
/// string it holds.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// One value of the input, copied to the output.
struct Node<'s, 'r> {
    st: &'s mut State<'r>,
    /// Arrays and objects around this value.
    depth: usize,
}

impl Node<'_, '_> {
    fn give_up<E: de::Error>(&self, stop: Stop) -> E {
        let what = format!("{stop:?}");
        self.st.stop.set(Some(stop));
        E::custom(what)
    }

    fn write_str<E: de::Error>(&mut self, s: &str) -> Result<(), E> {
        let s = match self.st.rules.secrets {
            Some(secrets) => secrets.redacted(s),
            None => Cow::Borrowed(s),
        };
        write_json_str(&mut self.st.out, &s).map_err(E::custom)
    }

    /// An integer's digits, quoted when the pass stringifies it (digits
    /// need no escaping, and the tree masks no secret in that pass).
    fn write_integer<E: de::Error>(self, digits: impl fmt::Display, large: bool) -> Result<(), E> {
        use std::io::Write;
        let quote = large && self.st.rules.stringify_large;
        let out = &mut self.st.out;
        let written = if quote {
            write!(out, "\"{digits}\"")
        } else {
            write!(out, "{digits}")
        };
        written.map_err(E::custom)
    }

    fn enter<E: de::Error>(&self) -> Result<usize, E> {
        if self.depth >= MAX_DEPTH {
            return Err(self.give_up(Stop::TooDeep));
        }
        Ok(self.depth + 1)
    }
}

fn write_json_str(out: &mut Vec<u8>, s: &str) -> serde_json::Result<()> {
    serde_json::to_writer(out, s)
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.st.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        let text: &[u8] = if v { b"true" } else { b"false" };
        self.st.out.extend_from_slice(text);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        let large = v > mediaparse_sdk::bigints::MAX_SAFE;
        self.write_integer(v, large)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        let large = v.unsigned_abs() > mediaparse_sdk::bigints::MAX_SAFE;
        self.write_integer(v, large)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        // serde_json hands floats as text; as a `Value` reads one otherwise.
        match serde_json::Number::from_f64(v) {
            Some(n) => self.st.out.extend_from_slice(n.to_string().as_bytes()),
            None => self.st.out.extend_from_slice(b"null"),
        }
        Ok(())
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.write_str(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.enter()?;
        let st = self.st;
        st.out.push(b'[');
        let mut first = true;
        loop {
            let mark = st.out.len();
            if !first {
                st.out.push(b',');
            }
            let node = Node {
                st: &mut *st,
                depth,
            };
            if seq.next_element_seed(node)?.is_none() {
                st.out.truncate(mark);
                break;
            }
            first = false;
        }
        st.out.push(b']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some(Key(first)) = map.next_key::<Key>()? else {
            self.st.out.extend_from_slice(b"{}");
            return Ok(());
        };
        if first == NUMBER_TOKEN {
            let digits: Cow<str> = map.next_value::<Key>()?.0;
            return match number_kind(&digits) {
                Some(NumberKind::Integer) => {
                    let large = super::is_large_integer_text(&digits);
                    self.write_integer(&*digits, large)
                }
                Some(NumberKind::Other) => {
                    self.st.out.extend_from_slice(digits.as_bytes());
                    Ok(())
                }
                // Only a literal marker object holds anything else.
                None => Err(self.give_up(Stop::Fallback)),
            };
        }
        if first == RAW_TOKEN {
            return Err(self.give_up(Stop::Fallback));
        }
        let depth = self.enter()?;
        let st = self.st;
        let mut names = Names::default();
        st.out.push(b'{');
        let mut key = Some(first);
        let mut written = 0usize;
        while let Some(name) = key {
            if st.rules.drop_sensitive && is_sensitive(&name) {
                map.next_value::<IgnoredAny>()?;
            } else {
                if st.rules.secrets.is_some_and(|s| s.leaks(&name)) || !names.insert(name.clone()) {
                    st.stop.set(Some(Stop::Fallback));
                    return Err(de::Error::custom("handed to the tree"));
                }
                if written > 0 {
                    st.out.push(b',');
                }
                write_json_str(&mut st.out, &name).map_err(de::Error::custom)?;
                st.out.push(b':');
                map.next_value_seed(Node {
                    st: &mut *st,
                    depth,
                })?;
                written += 1;
            }
            key = map.next_key::<Key>()?.map(|k| k.0);
        }
        st.out.push(b'}');
        Ok(())
    }
}

/// A member name, borrowed from the text when it holds no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The member names of one object so far: a duplicate is handed to the
/// tree, which keeps the last value at the first place.
#[derive(Default)]
struct Names<'a> {
    few: Vec<Cow<'a, str>>,
    many: HashSet<Cow<'a, str>>,
}

impl<'a> Names<'a> {
    /// Beyond this many members, a hash set instead of a scan.
    const FEW: usize = 24;

    /// False when `name` was already there.
    fn insert(&mut self, name: Cow<'a, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&name) {
                return false;
            }
            if self.few.len() < Self::FEW {
                self.few.push(name);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(name)
    }
}

enum NumberKind {
    Integer,
    Other,
}

/// The kind of a number as serde_json writes number text
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?(e[+-][0-9]+)?`), or `None` for any other
/// spelling.
fn number_kind(text: &str) -> Option<NumberKind> {
    let b = text.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return None;
    }
    let mut kind = NumberKind::Integer;
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return None;
        }
        kind = NumberKind::Other;
    }
    if b.get(i) == Some(&b'e') {
        i += 1;
        if !matches!(b.get(i), Some(b'+' | b'-')) {
            return None;
        }
        i += 1;
        if digits(&mut i) == 0 {
            return None;
        }
        kind = NumberKind::Other;
    }
    (i == b.len()).then_some(kind)
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
