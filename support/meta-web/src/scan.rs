//! Depth-first searches through a JSON document's text, without building
//! it: one pass over the bytes finds every object and its direct members,
//! and the answer is a borrowed [`RawValue`] of the document.
//!
//! The searches answer as the same searches over a `serde_json::Value` tree
//! do (pre-order, the first match in document order of the objects' opening
//! braces; of a name given twice in one object, the last).
//!
//! ```
//! use mediaparse_meta_web::scan;
//! let text = r#"{"a":[{"code":"x","pk":1},{"inner":{"code":"y"}}],"code":"top","key":{"n":2}}"#;
//! let found = scan::find_object(text, |m| m.string("code").as_deref() == Some("y")).unwrap();
//! assert_eq!(found.get(), r#"{"code":"y"}"#);
//! // The outer object opens first, so its `code` is the first found.
//! let first = scan::find_object(text, |m| m.has("code")).unwrap();
//! assert!(first.get().starts_with(r#"{"a":"#));
//! assert_eq!(scan::find_key(text, "n").unwrap().get(), "2");
//! assert!(scan::find_key("[1,", "n").is_none()); // not JSON
//! ```

use std::borrow::Cow;
use std::ops::Range;

use mediaparse_sdk::fields::RawValue;

/// The direct members of one object, as spans of the document.
pub struct Members<'t, 's> {
    text: &'t str,
    list: &'s [(Range<usize>, Range<usize>)],
}

impl<'t> Members<'t, '_> {
    /// The text of member `name`'s value (the last, if given twice).
    pub fn get(&self, name: &str) -> Option<&'t str> {
        self.list
            .iter()
            .rev()
            .find(|(key, _)| key_is(&self.text[key.clone()], name))
            .map(|(_, value)| &self.text[value.clone()])
    }

    /// Has the object a member `name`?
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Member `name` when it is a string (`Value::as_str`), unescaped.
    pub fn string(&self, name: &str) -> Option<Cow<'t, str>> {
        let raw = self.get(name)?;
        let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(inner))
        }
    }
}

/// Does the key text (between its quotes, escapes as written) name `name`?
fn key_is(key: &str, name: &str) -> bool {
    if key.contains('\\') {
        serde_json::from_str::<String>(&format!("\"{key}\"")).is_ok_and(|k| k == name)
    } else {
        key == name
    }
}

/// The first object (pre-order) that `pred` accepts; `None` when none does
/// or `text` is not JSON.
pub fn find_object<'t>(
    text: &'t str,
    mut pred: impl FnMut(&Members<'t, '_>) -> bool,
) -> Option<&'t RawValue> {
    let mut best: Option<Range<usize>> = None;
    objects(text, |object, members| {
        if best.as_ref().is_none_or(|b| object.start < b.start) && pred(members) {
            best = Some(object);
        }
    })?;
    raw(text, best?)
}

/// The value of the first member named `key` (pre-order over the objects);
/// `None` when there is none or `text` is not JSON.
pub fn find_key<'t>(text: &'t str, key: &str) -> Option<&'t RawValue> {
    let mut best: Option<(usize, &'t str)> = None;
    objects(text, |object, members| {
        if best.is_none_or(|(start, _)| object.start < start)
            && let Some(value) = members.get(key)
        {
            best = Some((object.start, value));
        }
    })?;
    serde_json::from_str(best?.1).ok()
}

fn raw(text: &str, span: Range<usize>) -> Option<&RawValue> {
    serde_json::from_str(&text[span]).ok()
}

/// Call `each` with every object of the JSON `text` (its span and direct
/// members), innermost first. `None` when `text` is not JSON.
fn objects<'t>(text: &'t str, mut each: impl FnMut(Range<usize>, &Members<'t, '_>)) -> Option<()> {
    // A validating pass first: the scanner below trusts its input.
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    struct Frame {
        start: usize,
        object: bool,
        members_from: usize,
        key: Option<Range<usize>>,
    }
    let bytes = text.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut members: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    let mut i = 0;
    // A value ended at `end` (exclusive), started at `start`: a member of
    // the enclosing object, if any.
    fn ended(
        frames: &mut [Frame],
        members: &mut Vec<(Range<usize>, Range<usize>)>,
        start: usize,
        end: usize,
    ) {
        if let Some(frame) = frames.last_mut()
            && frame.object
            && let Some(key) = frame.key.take()
        {
            members.push((key, start..end));
        }
    }
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                frames.push(Frame {
                    start: i,
                    object: bytes[i] == b'{',
                    members_from: members.len(),
                    key: None,
                });
                i += 1;
            }
            b'}' | b']' => {
                let frame = frames.pop()?;
                let span = frame.start..i + 1;
                if frame.object {
                    each(
                        span.clone(),
                        &Members {
                            text,
                            list: &members[frame.members_from..],
                        },
                    );
                }
                members.truncate(frame.members_from);
                ended(&mut frames, &mut members, span.start, span.end);
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                let is_key = frames.last().is_some_and(|f| f.object && f.key.is_none())
                    && bytes[i..]
                        .iter()
                        .find(|b| !b.is_ascii_whitespace())
                        .is_some_and(|&b| b == b':');
                if is_key {
                    if let Some(frame) = frames.last_mut() {
                        frame.key = Some(start + 1..i - 1);
                    }
                } else {
                    ended(&mut frames, &mut members, start, i);
                }
            }
            b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            _ => {
                // A number or a literal.
                let start = i;
                while i < bytes.len()
                    && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    i += 1;
                }
                ended(&mut frames, &mut members, start, i);
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The tree searches these replace.
    fn tree_find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
        match v {
            Value::Object(map) => map
                .get(key)
                .or_else(|| map.values().find_map(|c| tree_find_key(c, key))),
            Value::Array(items) => items.iter().find_map(|c| tree_find_key(c, key)),
            _ => None,
        }
    }

    fn tree_find_object<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
        match v {
            Value::Object(map) if map.contains_key(key) => Some(v),
            Value::Object(map) => map.values().find_map(|c| tree_find_object(c, key)),
            Value::Array(items) => items.iter().find_map(|c| tree_find_object(c, key)),
            _ => None,
        }
    }

    #[test]
    fn answers_as_the_tree_search() {
        let text = r#" { "x" : [ 1 , {"k": "in\"ner", "e\u0073c": true}, "k" ], "y": {"z": {"k": -1.5e3}},
            "k" : null , "w": {"k": {"k": 2}} } "#;
        let tree: Value = serde_json::from_str(text).unwrap();
        for key in ["k", "z", "esc", "x", "nope"] {
            let want = tree_find_key(&tree, key);
            let got = find_key(text, key).map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
            assert_eq!(want, got.as_ref(), "{key}");
        }
        // Pre-order: an enclosing object before the ones inside it, a
        // sibling before the ones after it.
        let nested = r#"[{"a":[{"k":1}],"b":{"k":2,"x":{"k":3}}},{"k":4}]"#;
        let nested_tree: Value = serde_json::from_str(nested).unwrap();
        for (text, tree) in [(text, &tree), (nested, &nested_tree)] {
            for key in ["k", "z", "esc", "x", "nope"] {
                let want = tree_find_object(tree, key);
                let got = find_object(text, |m| m.has(key))
                    .map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
                assert_eq!(want, got.as_ref(), "{key} in {text}");
                let want = tree_find_key(tree, key);
                let got =
                    find_key(text, key).map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
                assert_eq!(want, got.as_ref(), "{key} in {text}");
            }
        }
        let inner = find_object(text, |m| m.string("k").as_deref() == Some("in\"ner")).unwrap();
        assert!(inner.get().contains("e\\u0073c"));
        assert!(find_object(text, |m| m.has("esc")).is_some());
        assert!(find_object(r#"{"a":"}"}"#, |m| m.has("b")).is_none());
        assert!(find_object("{", |_| true).is_none());
    }

    #[test]
    fn duplicate_names_read_the_last() {
        let text = r#"{"code":"a","code":"b"}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(tree["code"], "b");
        assert!(find_object(text, |m| m.string("code").as_deref() == Some("b")).is_some());
    }
}
