//! JS object literals to JSON: pages assign state with `undefined`, bare
//! keys, single-quoted strings and trailing commas, which JSON rejects.
//! Big integers survive because the SDK's serde_json keeps numbers as text.

/// Rewrite a JS object literal as JSON text.
pub fn to_json(js: &str) -> String {
    let bytes = js.as_bytes();
    let mut out = String::with_capacity(js.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'\'' => {
                let end = string_end(bytes, i);
                if b == b'"' {
                    out.push_str(&js[i..end]);
                } else {
                    // Drop the closing quote only when there is one: an
                    // unterminated string runs to the end of the text, whose
                    // last byte may sit inside a multi-byte character.
                    let inner_end = if end > i + 1 && bytes[end - 1] == b'\'' {
                        end - 1
                    } else {
                        end
                    };
                    out.push_str(&requote(&js[i + 1..inner_end]));
                }
                i = end;
            }
            b',' => {
                let next = bytes[i + 1..]
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .map(|p| bytes[i + 1 + p]);
                if !matches!(next, Some(b'}') | Some(b']')) {
                    out.push(',');
                }
                i += 1;
            }
            b'!' if matches!(bytes.get(i + 1), Some(b'0') | Some(b'1'))
                && !is_ident(bytes.get(i + 2).copied()) =>
            {
                out.push_str(if bytes[i + 1] == b'0' {
                    "true"
                } else {
                    "false"
                });
                i += 2;
            }
            _ if is_ident_start(b) && !prev_is_ident(bytes, i) => {
                let start = i;
                while i < bytes.len() && is_ident(Some(bytes[i])) {
                    i += 1;
                }
                let word = &js[start..i];
                let after = bytes[i..]
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .map(|p| bytes[i + p]);
                if after == Some(b':') && key_position(&out) {
                    out.push('"');
                    out.push_str(word);
                    out.push('"');
                } else {
                    out.push_str(match word {
                        "undefined" | "NaN" | "Infinity" => "null",
                        other => other,
                    });
                }
            }
            _ => {
                out.push(b as char);
                if !b.is_ascii() {
                    // copy the rest of a multi-byte character untouched
                    let ch_len = js[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                    out.pop();
                    out.push_str(&js[i..i + ch_len]);
                    i += ch_len;
                    continue;
                }
                i += 1;
            }
        }
    }
    // `-Infinity` became `-null`
    out.replace("-null", "null")
}

/// Parse a JS object literal into a JSON value.
pub fn parse(js: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(&to_json(js))
}

fn string_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn requote(inner: &str) -> String {
    let mut s = String::with_capacity(inner.len() + 2);
    s.push('"');
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\'') => s.push('\''),
                Some(other) => {
                    s.push('\\');
                    s.push(other);
                }
                None => {}
            },
            '"' => s.push_str("\\\""),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident(b: Option<u8>) -> bool {
    matches!(b, Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
}

fn prev_is_ident(bytes: &[u8], i: usize) -> bool {
    i > 0 && (is_ident(Some(bytes[i - 1])) || bytes[i - 1] == b'.')
}

fn key_position(out: &str) -> bool {
    matches!(out.trim_end().chars().last(), Some('{') | Some(','))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_js_only_forms() {
        let js = r#"{a:undefined, 'b':'it\'s "x"', c:[1,2,], d:NaN, e:-Infinity, f:!0, g:!1, "h":"undefined", $i:{j:null,},}"#;
        let v = parse(js).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a":null,"b":"it's \"x\"","c":[1,2],"d":null,"e":null,"f":true,"g":false,"h":"undefined","$i":{"j":null}})
        );
    }

    #[test]
    fn keeps_big_integers_and_unicode() {
        let v = parse(r#"{"id":7305827432509082913123,"t":"中文 ✓"}"#).unwrap();
        assert_eq!(v["id"].to_string(), "7305827432509082913123");
        assert_eq!(v["t"], "中文 ✓");
    }

    #[test]
    fn never_panics_on_truncated_input() {
        // `'ո`: found by `cargo fuzz run jsobj` (an unterminated single-quoted
        // string ending inside a multi-byte character used to panic).
        for js in ["{'a", "{a:", "!", "{\"a\":\\", "'", "{,", "'ո", "{a:'日本"] {
            let _ = parse(js);
        }
    }
}
