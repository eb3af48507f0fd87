//! The redaction policy for operator secrets: configured values never leave
//! the service in a response, an error or a log line.

/// Configured secret values, and the scrubbing of them from text an
/// extractor produced. A value counts as a secret when it is at least
/// [`Secrets::MIN_LEN`] characters long; cookie-like values are also split
/// on `;` and `&`, and each `name=value` pair's value is a secret too, so a
/// single cookie copied out of a jar is caught.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    needles: Vec<String>,
}

impl Secrets {
    pub const MIN_LEN: usize = 6;
    pub const MASK: &'static str = "[redacted]";

    pub fn new(values: impl IntoIterator<Item = String>) -> Secrets {
        let mut needles: Vec<String> = Vec::new();
        for v in values {
            let v = v.trim().to_string();
            for pair in v.split([';', '&']).map(str::trim) {
                let value = pair.split_once('=').map(|(_, val)| val.trim());
                for piece in std::iter::once(pair).chain(value) {
                    if piece.chars().count() >= Self::MIN_LEN {
                        needles.push(piece.to_string());
                    }
                }
            }
            if v.chars().count() >= Self::MIN_LEN {
                needles.push(v);
            }
        }
        // Longest first, so a whole value is masked before its pieces.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        Secrets { needles }
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every secret replaced by [`Secrets::MASK`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for n in &self.needles {
            if out.contains(n.as_str()) {
                out = out.replace(n.as_str(), Self::MASK);
            }
        }
        out
    }

    /// Does `text` hold a secret?
    pub fn leaks(&self, text: &str) -> bool {
        self.needles.iter().any(|n| text.contains(n.as_str()))
    }

    /// Could a secret show in a string or member name of `text` (JSON as
    /// serde_json writes it) once unescaped? No when none appears in the
    /// text as it is and none holds a character serde_json escapes (`"`,
    /// `\`, control characters): the common case, answered without
    /// reading the JSON.
    pub fn may_leak_in_json(&self, text: &str) -> bool {
        self.needles.iter().any(|n| {
            n.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) || text.contains(n.as_str())
        })
    }

    /// `text` with every secret masked, borrowed when it holds none.
    pub fn redacted<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        if self.leaks(text) {
            std::borrow::Cow::Owned(self.redact(text))
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    pub fn redact_in_place(&self, text: &mut String) {
        if self.needles.iter().any(|n| text.contains(n.as_str())) {
            *text = self.redact(text);
        }
    }

    /// Scrub every string (keys and values) of a JSON value.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => self.redact_in_place(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            Value::Object(map) => {
                let leaking: Vec<String> = map
                    .keys()
                    .filter(|k| self.needles.iter().any(|n| k.contains(n.as_str())))
                    .cloned()
                    .collect();
                for k in leaking {
                    if let Some(v) = map.remove(&k) {
                        map.insert(self.redact(&k), v);
                    }
                }
                map.values_mut().for_each(|v| self.redact_json(v));
            }
            _ => {}
        }
    }
}
