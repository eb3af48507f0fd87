//! JSON inside HTML: `<script id=…>` blocks, `window.X = …` assignments and
//! element attributes, found by scanning, never by regex (regexes compiled in
//! a fresh wasm instance cost more than the whole lookup).

/// The text inside the first `<script>` whose `id` attribute is `id`.
pub fn script_by_id<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let tag = tags(html)
        .find(|t| t.name.eq_ignore_ascii_case("script") && t.attr("id").as_deref() == Some(id))?;
    let rest = &html[tag.end..];
    let close = find_ascii_ci(rest, "</script")?;
    Some(rest[..close].trim())
}

/// The value of `attr` on the first element whose `id` is `id`, entities decoded.
pub fn attr_by_id(html: &str, id: &str, attr: &str) -> Option<String> {
    tags(html)
        .find(|t| t.attr("id").as_deref() == Some(id))?
        .attr(attr)
}

/// The JS value assigned to `name` (for example `window.__INITIAL_STATE__`):
/// the balanced `{…}` or `[…]` text after `name =`.
pub fn assigned_value<'a>(html: &'a str, name: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(pos) = find(&html[from..], name) {
        let after = from + pos + name.len();
        let rest = html[after..].trim_start();
        if let Some(value) = rest.strip_prefix('=') {
            let value = value.trim_start();
            if let Some(found) = balanced(value) {
                return Some(found);
            }
        }
        from = after;
    }
    None
}

/// Where `needle` first occurs in `haystack`: `str::find`'s answer, from
/// `memchr`'s substring search. In a guest `str::find` is a scalar Two-Way
/// search; this one is vectorised (wasm `simd128`) and picks candidates by
/// the needle's rarest byte, which counts on a page of hundreds of KB.
pub fn find(haystack: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes())
}

/// Whether `needle` occurs in `haystack` (see [`find`]).
pub fn contains(haystack: &str, needle: &str) -> bool {
    find(haystack, needle).is_some()
}

/// The balanced object or array at the start of `text`, respecting strings
/// (`"…"`, `'…'` and `` `…` ``, with backslash escapes).
///
/// Most of a page's state is inside strings (keys, URLs, captions), so a
/// string is crossed with `memchr2` for its closing quote or a backslash —
/// vectorised in a guest (wasm `simd128`) — rather than byte by byte.
pub fn balanced(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let (open, close) = match bytes.first()? {
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' | b'\'' | b'`' => i = string_end(bytes, i + 1, b)?,
            _ if b == open => depth += 1,
            _ if b == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[..=i]);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the string that started before `from` ends: the index of its
/// closing `quote` (a backslash escapes the byte after it); `None` when the
/// text ends first.
fn string_end(bytes: &[u8], mut from: usize, quote: u8) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(quote, b'\\', bytes.get(from..)?)?;
        if bytes[at] == quote {
            return Some(at);
        }
        from = at + 2;
    }
}

/// Decode the HTML character references that occur in attributes and text.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('&') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|&e| e <= 10);
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
                n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            ch.map(|c| (c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One start tag: its name, raw attribute text and where it ends.
pub struct Tag<'a> {
    /// The attribute's name, as written.
    pub name: &'a str,
    attrs: &'a str,
    /// Byte offset just past the tag's `>`.
    pub end: usize,
}

impl Tag<'_> {
    /// An attribute's value, entities decoded (`Some("")` for a bare attribute).
    pub fn attr(&self, wanted: &str) -> Option<String> {
        let mut rest = self.attrs;
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
            if rest.is_empty() {
                return None;
            }
            let name_end = rest
                .find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '>')
                .unwrap_or(rest.len());
            let name = &rest[..name_end];
            rest = rest[name_end..].trim_start();
            let mut value = "";
            if let Some(after_eq) = rest.strip_prefix('=') {
                let after_eq = after_eq.trim_start();
                let (v, next) = match after_eq.chars().next() {
                    Some(q @ ('"' | '\'')) => match after_eq[1..].find(q) {
                        Some(end) => (&after_eq[1..end + 1], &after_eq[end + 2..]),
                        None => (&after_eq[1..], ""),
                    },
                    _ => {
                        let end = after_eq
                            .find(|c: char| c.is_ascii_whitespace())
                            .unwrap_or(after_eq.len());
                        (&after_eq[..end], &after_eq[end..])
                    }
                };
                value = v;
                rest = next;
            }
            if name.eq_ignore_ascii_case(wanted) {
                return Some(decode_entities(value));
            }
            if name.is_empty() {
                return None;
            }
        }
    }
}

/// Start tags of a document, in order (comments and end tags skipped).
pub fn tags(html: &str) -> impl Iterator<Item = Tag<'_>> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        loop {
            let open = pos + html.get(pos..)?.find('<')?;
            let rest = &html[open + 1..];
            if let Some(comment) = rest.strip_prefix("!--") {
                pos = open + 4 + comment.find("-->").map(|e| e + 3).unwrap_or(comment.len());
                continue;
            }
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap_or(rest.len());
            if name_len == 0 {
                pos = open + 1;
                continue;
            }
            let close = tag_end(&rest[name_len..]).map(|e| open + 1 + name_len + e);
            let Some(close) = close else {
                pos = html.len();
                return None;
            };
            pos = close + 1;
            return Some(Tag {
                name: &rest[..name_len],
                attrs: &html[open + 1 + name_len..close],
                end: close + 1,
            });
        }
    })
}

/// Offset of the `>` that ends a tag, skipping quoted attribute values.
fn tag_end(text: &str) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, b) in text.bytes().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Where `needle` first occurs in `haystack`, ASCII case ignored. Candidates
/// are found by the needle's first byte (a fast `memchr` scan when it is
/// not a letter, as in `</script`), then compared in full.
fn find_ascii_ci(haystack: &str, needle: &str) -> Option<usize> {
    let (bytes, wanted) = (haystack.as_bytes(), needle.as_bytes());
    let &first = wanted.first()?;
    let mut from = 0;
    while from + wanted.len() <= bytes.len() {
        let rest = &bytes[from..];
        let at = if first.is_ascii_alphabetic() {
            rest.iter().position(|b| b.eq_ignore_ascii_case(&first))?
        } else {
            memchr::memchr(first, rest)?
        };
        let start = from + at;
        let candidate = bytes.get(start..start + wanted.len())?;
        if candidate.eq_ignore_ascii_case(wanted) {
            return Some(start);
        }
        from = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head><!-- <script id="x">no</script> -->
<script src="/a.js"></script>
<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__" type="application/json">{"a":"</div>","b":[1,2]}</script>
<div id='cs' class="eyJ2Ijp7fX0=" data-x=1></div>
<script>window.__INITIAL_STATE__ = {"note":{"s":"}{"},"n":undefined};window.other=1</script></head></html>"#;

    #[test]
    fn find_answers_as_str_find_does() {
        let page = format!("{PAGE}<p>抱歉出错了</p> window.a = 1; window.ab = {{}}");
        for needle in [
            "",
            "<",
            "script",
            "</script",
            "window.ab",
            "抱歉出错了",
            "出错",
            "missing",
            "b\":[1,2]",
        ] {
            assert_eq!(find(&page, needle), page.find(needle), "{needle:?}");
            assert_eq!(contains(&page, needle), page.contains(needle), "{needle:?}");
        }
        assert_eq!(find("ab", "abc"), None);
    }

    #[test]
    fn finds_script_by_id() {
        assert_eq!(
            script_by_id(PAGE, "__UNIVERSAL_DATA_FOR_REHYDRATION__"),
            Some(r#"{"a":"</div>","b":[1,2]}"#)
        );
        assert_eq!(script_by_id(PAGE, "x"), None);
    }

    #[test]
    fn finds_attributes_by_id() {
        assert_eq!(
            attr_by_id(PAGE, "cs", "class").as_deref(),
            Some("eyJ2Ijp7fX0=")
        );
        assert_eq!(attr_by_id(PAGE, "cs", "data-x").as_deref(), Some("1"));
        assert_eq!(attr_by_id(PAGE, "missing", "class"), None);
    }

    #[test]
    fn finds_assigned_values_with_braces_in_strings() {
        assert_eq!(
            assigned_value(PAGE, "window.__INITIAL_STATE__"),
            Some(r#"{"note":{"s":"}{"},"n":undefined}"#)
        );
        assert_eq!(assigned_value(PAGE, "window.nothing"), None);
    }

    #[test]
    fn decodes_entities() {
        assert_eq!(
            decode_entities("a&amp;b&#39;c&#x4e2d;&bogus;&"),
            "a&b'c中&bogus;&"
        );
    }

    #[test]
    fn finds_needles_ignoring_ascii_case() {
        assert_eq!(find_ascii_ci("ab</SCRIPT>", "</script"), Some(2));
        assert_eq!(find_ascii_ci("<<</scrip</Script", "</script"), Some(9));
        assert_eq!(find_ascii_ci("x</scrip", "</script"), None);
        assert_eq!(find_ascii_ci("aXbxBc", "xb"), Some(1));
        assert_eq!(find_ascii_ci("€</script", "</script"), Some(3));
        assert_eq!(find_ascii_ci("", "</script"), None);
    }

    /// The byte-by-byte definition `balanced` must agree with.
    fn balanced_bytewise(text: &str) -> Option<&str> {
        let bytes = text.as_bytes();
        let (open, close) = match bytes.first()? {
            b'{' => (b'{', b'}'),
            b'[' => (b'[', b']'),
            _ => return None,
        };
        let (mut depth, mut quote, mut escaped) = (0usize, None, false);
        for (i, &b) in bytes.iter().enumerate() {
            if let Some(q) = quote {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == q {
                    quote = None;
                }
                continue;
            }
            match b {
                b'"' | b'\'' | b'`' => quote = Some(b),
                _ if b == open => depth += 1,
                _ if b == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(&text[..=i]);
                    }
                }
                _ => {}
            }
        }
        None
    }

    #[test]
    fn balanced_agrees_with_the_bytewise_scan() {
        // Every string over a small alphabet of the bytes that matter, up
        // to 6 long, after each opening bracket.
        const ALPHABET: &[u8] = b"{}[]\"'`\\x";
        let mut checked = 0;
        for len in 0..=6u32 {
            for mut n in 0..(ALPHABET.len() as u64).pow(len) {
                let mut text = String::new();
                for _ in 0..len {
                    text.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
                    n /= ALPHABET.len() as u64;
                }
                for start in ["{", "["] {
                    let text = format!("{start}{text}");
                    assert_eq!(balanced(&text), balanced_bytewise(&text), "{text:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000_000);
    }

    #[test]
    fn survives_truncated_markup() {
        assert_eq!(script_by_id("<script id=\"a\">{", "a"), None);
        assert_eq!(attr_by_id("<div id=\"a", "a", "class"), None);
        assert_eq!(balanced("{\"a\": [1, 2"), None);
    }
}
