//! Expectations anchored to the payloads: the facts a case's recorded
//! response bodies state about its media, read generically (never through
//! the extractor's own field paths), and the check that the case's expected
//! media agrees with them.
//!
//! - Every expected media URL (images, videos, audios, thumbnail) must occur
//!   in a recorded body, after JSON and HTML unescaping (`\u002F`, `\/`,
//!   `&amp;`), or in the body as transformed by one of the platform's
//!   declared [`Rewrite`]s (`fixtures/rewrites.json`).
//! - Where the JSON object holding a URL (or one of its few nearest
//!   ancestors) states widths or heights, the expected width and height are
//!   among them.
//! - Where the bodies state durations, the expected duration is one of them
//!   (seconds or milliseconds, within a second).
//! - Images found in one body appear there in the expected order, and every
//!   entry of the list holding them holds an expected URL.
//!
//! A rewrite is applied to the payload text, never to the expectation, so a
//! URL the extractor builds is only accepted if the payload yields it by
//! that rule.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fixture::{Case, FixtureError};

/// The name of the file, beside the case folders, that declares a
/// platform's rewrites.
pub const REWRITES_FILE: &str = "rewrites.json";

/// One documented way an extractor turns payload text into a media URL.
/// (Unknown fields are refused by [`RewriteKind`], which receives the rest.)
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rewrite {
    /// A short name, printed with every URL found through it.
    pub name: String,
    /// What the extractor does and why (where the platform guide says so).
    pub doc: String,
    /// The transformation applied to each (unescaped) body.
    #[serde(flatten)]
    pub kind: RewriteKind,
}

/// How a [`Rewrite`] transforms a body's text.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RewriteKind {
    /// Every occurrence of `from` becomes `to` (`playwm` → `play`).
    Replace {
        /// The text replaced.
        from: String,
        /// Its replacement.
        to: String,
    },
    /// Every run of base64 (standard or URL-safe, 16 characters or more)
    /// that decodes to UTF-8 text is replaced by that text.
    Base64,
    /// The body percent-decoded (a URL-encoded JSON blob, a
    /// `signatureCipher`'s `url=`).
    PercentDecode,
    /// A URL the extractor builds from values in the body: for each value
    /// of `key` (a string, or each string of an array), `template` with
    /// `{}` replaced by the value, `{stem}` by the value without its
    /// extension, `{ext}` by that extension, `{name}` by its last path
    /// segment up to a `!`, `?` or `.`, and `{first:K}` by the first value
    /// of key `K` in the same body.
    Template {
        /// The key whose values are used.
        key: String,
        /// The URL built.
        template: String,
    },
    /// URLs in the body and the expected URL are compared with these query
    /// parameters removed (values the extractor computes, such as a solved
    /// challenge).
    DropParams {
        /// The query parameter names removed.
        params: Vec<String>,
    },
}

/// A platform's declared rewrites (`fixtures/rewrites.json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rewrites {
    /// The rewrites, tried in order after the plain and unescaped bodies.
    pub rewrites: Vec<Rewrite>,
}

impl Rewrites {
    /// The rewrites in `fixtures/rewrites.json`; none when the file is absent.
    pub fn load(fixtures: &Path) -> Result<Rewrites, FixtureError> {
        let path = fixtures.join(REWRITES_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Rewrites::default()),
            Err(source) => return Err(FixtureError::Io { path, source }),
        };
        let rewrites: Rewrites =
            serde_json::from_str(&text).map_err(|source| FixtureError::Json {
                path: path.clone(),
                source,
            })?;
        for r in &rewrites.rewrites {
            if r.name.trim().is_empty() || r.doc.trim().is_empty() {
                return Err(FixtureError::Invalid {
                    path,
                    message: "every rewrite needs a name and a doc".into(),
                });
            }
        }
        Ok(rewrites)
    }

    /// The rewrites for a case: its folder's parent's `rewrites.json`.
    pub fn for_case(case: &Case) -> Result<Rewrites, FixtureError> {
        match case.dir.parent() {
            Some(p) => Rewrites::load(p),
            None => Ok(Rewrites::default()),
        }
    }
}

/// Where an expected URL was found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// Index of the exchange in `case.json`; `None`: the caller's input
    /// (a direct media URL).
    pub exchange: Option<usize>,
    /// The body's file (`inline`, or `input` for the caller's input).
    pub body: String,
    /// `raw`, `unescaped`, or the name of the rewrite that yields the URL.
    pub via: String,
    /// The text `offset` counts in: `via`'s, or for a URL found with
    /// parameters dropped, the form holding the URL as the payload writes it.
    pub form: String,
    /// Byte offset of the URL in that text.
    pub offset: usize,
}

/// One expected URL and what the payload says about it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UrlFact {
    /// Where the URL sits in the expected media (`images/0`, `thumbnail`).
    pub member: String,
    /// The expected URL.
    pub url: String,
    /// Where it was found; `None`: in no recorded body.
    pub found: Option<Found>,
    /// Widths the nearest object stating any states (empty: none stated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stated_widths: Vec<u64>,
    /// Heights the nearest object stating any states.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stated_heights: Vec<u64>,
}

/// The facts read from a case's payload, and the disagreements found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Facts {
    /// Every expected media URL.
    pub urls: Vec<UrlFact>,
    /// Durations the bodies state (numbers under a key naming a duration
    /// or a length, as written).
    pub stated_durations: Vec<f64>,
    /// Where the expectation disagrees with the payload, one line each.
    pub problems: Vec<String>,
}

/// One body in the forms it is searched in.
struct Texts {
    exchange: Option<usize>,
    body: String,
    /// `(via, text)`: raw, unescaped, then each rewrite's.
    forms: Vec<(String, String)>,
    /// For each URL a `template` rewrite built: `(rewrite, url, form, offset)`,
    /// where the value it was built from sits.
    built: Vec<(String, String, String, usize)>,
}

/// JSON (`\uXXXX`, `\/`) and HTML (`&amp;`, `&#47;`) unescaping.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('/') {
            out.push('/');
            rest = tail;
        } else if let Some(hex) = after.strip_prefix('u').and_then(|h| h.get(..4))
            && let Some(c) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
        {
            out.push(c);
            rest = &after[5..];
        } else {
            out.push('\\');
            rest = after;
        }
    }
    out.push_str(rest);
    crate::html::decode_entities(&out)
}

fn base64_runs(text: &str) -> String {
    use base64::Engine;
    let is_b64 = |c: char| c.is_ascii_alphanumeric() || "+/=-_".contains(c);
    let mut out = String::new();
    for run in text.split(|c: char| !is_b64(c)).filter(|r| r.len() >= 16) {
        let trimmed = run.trim_end_matches('=');
        for engine in [
            base64::engine::general_purpose::STANDARD_NO_PAD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            if let Ok(bytes) = engine.decode(trimmed)
                && let Ok(s) = String::from_utf8(bytes)
            {
                out.push_str(&s);
                out.push('\n');
                break;
            }
        }
    }
    unescape(&out)
}

/// Every value of `key` in `text` (JSON or a JS literal): a quoted string,
/// or each quoted string of an array; with the offset where it starts.
fn values_of(text: &str, key: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    if key.is_empty() {
        return out;
    }
    for (i, _) in text.match_indices(key) {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = text[i + key.len()..].trim_start_matches(['"', '\'']);
        let Some(rest) = rest.trim_start().strip_prefix([':', '=']) else {
            continue;
        };
        let rest = rest.trim_start();
        let (list, mut rest) = match rest.strip_prefix('[') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        loop {
            rest = rest.trim_start();
            let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
                break;
            };
            let body = &rest[1..];
            let Some(end) = body.find(q) else { break };
            out.push((text.len() - body.len(), body[..end].to_string()));
            rest = body[end + 1..].trim_start();
            match rest.strip_prefix(',') {
                Some(r) if list => rest = r,
                _ => break,
            }
        }
    }
    out
}

/// The URLs `template` builds from the values of `key` in `text`, each with
/// the offset of its value.
fn template(text: &str, key: &str, template: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut filled = template.to_string();
    while let Some(i) = filled.find("{first:") {
        let Some(end) = filled[i..].find('}') else {
            break;
        };
        let other = &filled[i + 7..i + end];
        let value = values_of(text, other)
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .unwrap_or_default();
        filled.replace_range(i..i + end + 1, &value);
    }
    for (at, value) in values_of(text, key) {
        let (stem, ext) = match value.rsplit_once('.') {
            Some((s, e)) if !e.contains('/') => (s, e),
            _ => (value.as_str(), ""),
        };
        let last = value.rsplit('/').next().unwrap_or_default();
        let name = last.split(['!', '?', '.']).next().unwrap_or_default();
        let url = filled
            .replace("{stem}", stem)
            .replace("{ext}", ext)
            .replace("{name}", name)
            .replace("{}", &value);
        out.push((url, at));
    }
    out
}

/// A URL without the named query parameters.
fn without_params(url: &str, params: &[String]) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| {
            let name = kv.split('=').next().unwrap_or_default();
            !params.iter().any(|p| p == name)
        })
        .collect();
    if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    }
}

/// Offsets of every `http(s)://…` in `text`.
fn url_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.match_indices("http")
        .map(|(i, _)| i)
        .filter(|&i| text[i..].starts_with("http://") || text[i..].starts_with("https://"))
}

/// The URL at the start of `text`, up to a character that ends it in JSON or HTML.
fn url_at(text: &str) -> &str {
    let end = text
        .find(|c: char| c.is_whitespace() || "\"'<>\\,;)]}".contains(c))
        .unwrap_or(text.len());
    &text[..end]
}

/// Every `http(s)://…` in `text`, each without the named parameters, one a line.
fn urls_without_params(text: &str, params: &[String]) -> String {
    let mut out = String::new();
    for i in url_starts(text) {
        out.push_str(&without_params(url_at(&text[i..]), params));
        out.push('\n');
    }
    out
}

impl Texts {
    fn new(exchange: Option<usize>, body: String, bytes: &[u8], rewrites: &Rewrites) -> Texts {
        let raw = String::from_utf8_lossy(bytes).into_owned();
        let plain = unescape(&raw);
        let mut forms = vec![
            ("raw".to_string(), raw),
            ("unescaped".to_string(), plain.clone()),
        ];
        let mut built = Vec::new();
        for r in &rewrites.rewrites {
            // Each rewrite also sees the forms earlier rewrites made, so a
            // percent-decoded body can then be base64-decoded, and so on.
            let sources: Vec<(String, String)> = forms[1..].to_vec();
            let mut made = String::new();
            for (source_name, source) in &sources {
                let text = match &r.kind {
                    RewriteKind::Replace { from, to } if !from.is_empty() => {
                        if source.contains(from.as_str()) {
                            source.replace(from.as_str(), to)
                        } else {
                            String::new()
                        }
                    }
                    RewriteKind::Replace { .. } => String::new(),
                    RewriteKind::Base64 => base64_runs(source),
                    RewriteKind::PercentDecode => {
                        unescape(&percent_encoding::percent_decode_str(source).decode_utf8_lossy())
                    }
                    RewriteKind::Template { key, template: t } => {
                        let urls = template(source, key, t);
                        let text: Vec<&str> = urls.iter().map(|(u, _)| u.as_str()).collect();
                        let text = text.join("\n");
                        built.extend(
                            urls.into_iter()
                                .map(|(u, at)| (r.name.clone(), u, source_name.clone(), at)),
                        );
                        text
                    }
                    RewriteKind::DropParams { params } => urls_without_params(source, params),
                };
                if !text.is_empty() {
                    made.push_str(&text);
                    made.push('\n');
                }
            }
            forms.push((r.name.clone(), made));
        }
        Texts {
            exchange,
            body,
            forms,
            built,
        }
    }

    /// The first form holding `url` (or `url` without the dropped
    /// parameters, in a form a `drop_params` rewrite made).
    fn find(&self, url: &str, rewrites: &Rewrites) -> Option<Found> {
        for (n, (via, text)) in self.forms.iter().enumerate() {
            let dropped = rewrites
                .rewrites
                .iter()
                .find(|r| &r.name == via)
                .and_then(|r| match &r.kind {
                    RewriteKind::DropParams { params } => Some(params),
                    _ => None,
                });
            let wanted = match dropped {
                Some(params) => without_params(url, params),
                None => url.to_string(),
            };
            let Some(offset) = find_whole(text, &wanted) else {
                continue;
            };
            let found = |form: &str, offset: usize| Found {
                exchange: self.exchange,
                body: self.body.clone(),
                via: via.clone(),
                form: form.to_string(),
                offset,
            };
            // Where the payload writes that URL (with its parameters), so
            // the sizes around it can be read.
            if let Some(params) = dropped {
                for (form, text) in &self.forms[1..n] {
                    if let Some(at) = url_starts(text)
                        .find(|&i| without_params(url_at(&text[i..]), params) == wanted)
                    {
                        return Some(found(form, at));
                    }
                }
            }
            // Where the value the URL was built from sits.
            if let Some((_, _, form, at)) = self
                .built
                .iter()
                .find(|(r, u, _, _)| r == via && *u == wanted)
            {
                return Some(found(form, *at));
            }
            return Some(found(via, offset));
        }
        None
    }

    fn form(&self, via: &str) -> &str {
        self.forms
            .iter()
            .find(|(v, _)| v == via)
            .map(|(_, t)| t.as_str())
            .unwrap_or_default()
    }
}

/// The first occurrence of `url` in `text` that is a whole URL, not the
/// start of a longer one (`…/play/?id=1` is not found in `…/play/?id=1&wm=1`).
fn find_whole(text: &str, url: &str) -> Option<usize> {
    if url.is_empty() {
        return None;
    }
    text.match_indices(url).map(|(i, _)| i).find(|&i| {
        text[i + url.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || "-._~:/?#[@!$&*+=%".contains(c)))
    })
}

/// Objects (`{…}` spans) enclosing `offset` in `text`, innermost first.
/// Strings in double quotes are skipped, so braces in text do not count.
fn enclosing_objects(text: &str, offset: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut stack: Vec<usize> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                // A stray quote in HTML text: a string never spans lines in JSON.
                b'\n' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' => stack.push(i),
                b'}' => {
                    if let Some(start) = stack.pop()
                        && start < offset
                        && i > offset
                    {
                        spans.push((start, i + 1));
                    }
                    if stack.is_empty() && i > offset {
                        break;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    spans.sort_by_key(|(s, e)| e - s);
    spans
}

/// Numbers stated under keys whose lowercased name `matches` in `text`
/// (`"width": 1080`, `width="1080"`, `imageWidth:1080`).
fn stated_numbers(text: &str, matches: impl Fn(&str) -> bool) -> Vec<f64> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let key = text[start..i].to_ascii_lowercase();
        let mut j = i;
        while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b' ') {
            j += 1;
        }
        if j < bytes.len() && matches!(bytes[j], b':' | b'=') && matches(&key) {
            j += 1;
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b' ') {
                j += 1;
            }
            let n = j;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            if let Ok(v) = text[n..j].parse::<f64>() {
                out.push(v);
            }
        }
    }
    out
}

fn is_width(key: &str) -> bool {
    key == "w" || key.ends_with("width")
}

fn is_height(key: &str) -> bool {
    key == "h" || key.ends_with("height")
}

fn is_duration(key: &str) -> bool {
    key.contains("duration") || key.ends_with("length") || key == "lengthseconds"
}

/// The smallest array (`[…]` span) in `text` holding every offset.
fn enclosing_list(text: &str, offsets: &[usize]) -> Option<(usize, usize)> {
    let (lo, hi) = (*offsets.iter().min()?, *offsets.iter().max()?);
    let bytes = text.as_bytes();
    let mut stack: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' | b'\n' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' => stack.push(i),
                b']' => {
                    if let Some(start) = stack.pop()
                        && start < lo
                        && i > hi
                    {
                        return Some((start, i + 1));
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// The entries of the list at `span`: their spans, split at top-level commas.
fn list_entries(text: &str, span: (usize, usize)) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = span.0 + 1;
    for (i, &b) in bytes.iter().enumerate().take(span.1 - 1).skip(span.0 + 1) {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text[start..span.1 - 1].trim().is_empty() {
        out.push((start, span.1 - 1));
    }
    out
}

/// Whether `inner` sits inside an array of `outer` (`outer` then
/// describes a list of such objects, not this one).
fn inside_array(text: &str, outer: (usize, usize), inner: (usize, usize)) -> bool {
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.as_bytes()[outer.0 + 1..inner.0].iter() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' => depth += 1,
            b']' => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// Widths and heights stated by the nearest object around `offset` that
/// states any, climbing at most four objects and never out of an array
/// (the object holding a list of renditions states the post's size, not
/// each rendition's).
fn stated_sizes(text: &str, offset: usize) -> (Vec<u64>, Vec<u64>) {
    let spans = enclosing_objects(text, offset);
    for (i, &(start, end)) in spans.iter().enumerate().take(4) {
        if i > 0 && inside_array(text, (start, end), spans[i - 1]) {
            break;
        }
        let object = &text[start..end];
        let w = stated_numbers(object, is_width);
        let h = stated_numbers(object, is_height);
        if !w.is_empty() || !h.is_empty() {
            let whole = |v: Vec<f64>| -> Vec<u64> {
                let set: BTreeSet<u64> = v.into_iter().map(|x| x as u64).collect();
                set.into_iter().collect()
            };
            return (whole(w), whole(h));
        }
    }
    (Vec::new(), Vec::new())
}

/// The facts a case's payload states about its expected media, and where
/// the expectation disagrees. A case that expects an error has no media
/// facts.
pub fn facts(case: &Case, rewrites: &Rewrites) -> Facts {
    let mut facts = Facts::default();
    let Some(media) = &case.expect.media else {
        return facts;
    };
    let mut bodies: Vec<Texts> = case
        .exchanges
        .iter()
        .enumerate()
        .map(|(i, ex)| {
            let name = ex
                .response
                .body_file
                .clone()
                .unwrap_or_else(|| "inline".into());
            Texts::new(Some(i), name, &case.body(ex).unwrap_or_default(), rewrites)
        })
        .collect();
    // A direct media URL as the input is a payload too.
    bodies.push(Texts::new(
        None,
        "input".into(),
        case.input.as_bytes(),
        rewrites,
    ));
    let mut wanted: Vec<(String, String, u64, u64)> = Vec::new();
    if let Some(t) = media["thumbnail"].as_str().filter(|t| !t.is_empty()) {
        wanted.push(("thumbnail".into(), t.to_string(), 0, 0));
    }
    for list in ["images", "videos", "audios"] {
        for (i, item) in media[list].as_array().into_iter().flatten().enumerate() {
            let url = item["url"].as_str().unwrap_or_default().to_string();
            let w = item["width"].as_u64().unwrap_or(0);
            let h = item["height"].as_u64().unwrap_or(0);
            wanted.push((format!("{list}/{i}"), url, w, h));
        }
    }
    for (member, url, w, h) in wanted {
        let found = bodies.iter().find_map(|b| b.find(&url, rewrites));
        let mut fact = UrlFact {
            member: member.clone(),
            url: url.clone(),
            found: found.clone(),
            stated_widths: Vec::new(),
            stated_heights: Vec::new(),
        };
        match &found {
            None => facts.problems.push(format!(
                "{member}: {url} occurs in no recorded body (nor through a declared rewrite)"
            )),
            Some(f) => {
                let body = bodies
                    .iter()
                    .find(|b| b.exchange == f.exchange)
                    .unwrap_or(&bodies[bodies.len() - 1]);
                let text = body.form(&f.form);
                (fact.stated_widths, fact.stated_heights) = stated_sizes(text, f.offset);
                if w > 0 && !fact.stated_widths.is_empty() && !fact.stated_widths.contains(&w) {
                    facts.problems.push(format!(
                        "{member}: width {w}, but the payload's object around its URL states widths {:?}",
                        fact.stated_widths
                    ));
                }
                if h > 0 && !fact.stated_heights.is_empty() && !fact.stated_heights.contains(&h) {
                    facts.problems.push(format!(
                        "{member}: height {h}, but the payload's object around its URL states heights {:?}",
                        fact.stated_heights
                    ));
                }
            }
        }
        facts.urls.push(fact);
    }
    // Order: images found in the same body form appear there in order.
    let images: Vec<&UrlFact> = facts
        .urls
        .iter()
        .filter(|u| u.member.starts_with("images/"))
        .collect();
    if let Some(first) = images.first().and_then(|u| u.found.as_ref()) {
        let same = images.iter().all(|u| {
            u.found
                .as_ref()
                .is_some_and(|f| f.exchange == first.exchange && f.form == first.form)
        });
        let offsets: Vec<usize> = images
            .iter()
            .filter_map(|u| u.found.as_ref().map(|f| f.offset))
            .collect();
        if same && offsets.windows(2).any(|w| w[0] > w[1]) {
            facts.problems.push(format!(
                "images: the payload lists them in another order (first occurrences at {offsets:?} in {})",
                first.body
            ));
        }
    }
    // Count: the payload's list holding the images has no entry without
    // an expected URL (an item the expectation dropped).
    if let Some(first) = images.first().and_then(|u| u.found.as_ref())
        && images.len() >= 2
        && images.iter().all(|u| {
            u.found
                .as_ref()
                .is_some_and(|f| f.exchange == first.exchange && f.form == first.form)
        })
    {
        let body = bodies.iter().find(|b| b.exchange == first.exchange);
        let text = body.map(|b| b.form(&first.form)).unwrap_or_default();
        let offsets: Vec<usize> = images
            .iter()
            .filter_map(|u| u.found.as_ref().map(|f| f.offset))
            .collect();
        let expected: Vec<&str> = facts
            .urls
            .iter()
            .filter(|u| u.member != "thumbnail")
            .map(|u| u.url.as_str())
            .collect();
        if let Some(list) = enclosing_list(text, &offsets) {
            let entries = list_entries(text, list);
            // Where expected URLs (or the values they were built from) sit in this text.
            let found_at: Vec<usize> = facts
                .urls
                .iter()
                .filter_map(|u| u.found.as_ref())
                .filter(|f| f.exchange == first.exchange && f.form == first.form)
                .map(|f| f.offset)
                .collect();
            let missing: Vec<usize> = entries
                .iter()
                .enumerate()
                .filter(|(_, (s, e))| {
                    !found_at.iter().any(|o| (*s..*e).contains(o))
                        && !expected.iter().any(|u| text[*s..*e].contains(u))
                })
                .map(|(i, _)| i)
                .collect();
            if !missing.is_empty() {
                facts.problems.push(format!(
                    "images: the payload's list holding them has {} entries, and entries {missing:?} hold none of the expected URLs",
                    entries.len()
                ));
            }
        }
    }
    // Duration.
    for b in &bodies {
        facts
            .stated_durations
            .extend(stated_numbers(b.form("unescaped"), is_duration));
    }
    facts.stated_durations.sort_by(f64::total_cmp);
    facts.stated_durations.dedup();
    let d = media["duration"].as_f64().unwrap_or(0.0);
    let has_media = facts.urls.iter().any(|u| u.member != "thumbnail");
    if d > 0.0
        && has_media
        && !facts.stated_durations.is_empty()
        && !facts
            .stated_durations
            .iter()
            .any(|&s| (s - d).abs() < 1.0 || (s / 1000.0 - d).abs() < 1.0)
    {
        facts.problems.push(format!(
            "duration {d}, but the payload states durations {:?} (seconds or milliseconds)",
            facts.stated_durations
        ));
    }
    facts
}

/// [`facts`] with the case's own rewrites, as a report: `Err` lists the
/// disagreements, one a line.
pub fn check(case: &Case) -> Result<Facts, String> {
    let rewrites = Rewrites::for_case(case).map_err(|e| e.to_string())?;
    let facts = facts(case, &rewrites);
    if facts.problems.is_empty() {
        Ok(facts)
    } else {
        Err(facts.problems.join("\n  "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Expect, RecordedExchange, RecordedRequest, RecordedResponse};
    use serde_json::json;

    fn case(body: &str, media: serde_json::Value) -> Case {
        Case {
            description: String::new(),
            input: "https://a.example/p/1".into(),
            now_unix_ms: None,
            config: vec![],
            remembered: vec![],
            helper_hosts: vec![],
            exchanges: vec![RecordedExchange {
                request: RecordedRequest {
                    method: "GET".into(),
                    url: "https://a.example/p/1".into(),
                    headers: vec![],
                    body: None,
                },
                response: RecordedResponse {
                    status: 200,
                    headers: vec![],
                    body_file: None,
                    body: Some(body.into()),
                },
            }],
            expect: Expect {
                media: Some(media),
                ..Expect::default()
            },
            provenance: None,
            dir: Default::default(),
        }
    }

    fn images(list: &[(&str, u64, u64)], duration: f64) -> serde_json::Value {
        let images: Vec<_> = list
            .iter()
            .map(|(u, w, h)| json!({"url": u, "width": w, "height": h}))
            .collect();
        json!({"title": "", "thumbnail": "", "duration": duration, "images": images, "videos": [], "audios": []})
    }

    fn rewrites(json: serde_json::Value) -> Rewrites {
        serde_json::from_value(json).unwrap()
    }

    const PAGE: &str = r#"<script>window.s = {"note":{"duration":12,"imageList":[
        {"url":"https:\u002F\u002Fcdn.example\u002Fa.jpg?x=1&amp;y=2","width":1080,"height":1440},
        {"info":{"url":"https:\/\/cdn.example\/b.jpg"},"w":720,"h":1280}]}}</script>"#;

    #[test]
    fn urls_found_after_unescaping_with_their_sizes() {
        let c = case(
            PAGE,
            images(
                &[
                    ("https://cdn.example/a.jpg?x=1&y=2", 1080, 1440),
                    ("https://cdn.example/b.jpg", 720, 1280),
                ],
                12.0,
            ),
        );
        let f = facts(&c, &Rewrites::default());
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert_eq!(f.urls[0].found.as_ref().unwrap().via, "unescaped");
        assert_eq!(f.urls[1].stated_widths, vec![720]);
        assert_eq!(f.stated_durations, vec![12.0]);
    }

    #[test]
    fn a_url_the_payload_does_not_hold_fails() {
        let c = case(
            PAGE,
            images(&[("https://cdn.example/c.jpg", 1080, 1440)], 12.0),
        );
        let f = facts(&c, &Rewrites::default());
        assert_eq!(f.problems.len(), 1, "{:?}", f.problems);
        assert!(f.problems[0].contains("occurs in no recorded body"));
        assert!(f.urls[0].found.is_none());
    }

    #[test]
    fn sizes_order_and_duration_the_payload_states_must_agree() {
        let a = "https://cdn.example/a.jpg?x=1&y=2";
        let b = "https://cdn.example/b.jpg";
        let wrong_width = case(PAGE, images(&[(a, 1081, 1440), (b, 720, 1280)], 12.0));
        let p = facts(&wrong_width, &Rewrites::default()).problems;
        assert!(p.len() == 1 && p[0].contains("width 1081"), "{p:?}");
        let wrong_height = case(PAGE, images(&[(a, 1080, 1440), (b, 720, 1281)], 12.0));
        let p = facts(&wrong_height, &Rewrites::default()).problems;
        assert!(p.len() == 1 && p[0].contains("height 1281"), "{p:?}");
        let swapped = case(PAGE, images(&[(b, 720, 1280), (a, 1080, 1440)], 12.0));
        let p = facts(&swapped, &Rewrites::default()).problems;
        assert!(p.len() == 1 && p[0].contains("another order"), "{p:?}");
        let wrong_duration = case(PAGE, images(&[(a, 1080, 1440), (b, 720, 1280)], 30.0));
        let p = facts(&wrong_duration, &Rewrites::default()).problems;
        assert!(p.len() == 1 && p[0].contains("duration 30"), "{p:?}");
        // Milliseconds count too; an unknown size (0) is not checked.
        let ms = case(
            &PAGE.replace("\"duration\":12", "\"durationMs\":12400"),
            images(&[(a, 0, 0), (b, 720, 1280)], 12.4),
        );
        assert!(facts(&ms, &Rewrites::default()).problems.is_empty());
    }

    #[test]
    fn only_a_declared_rewrite_accepts_a_url_the_payload_does_not_hold_verbatim() {
        let body = r#"{"play":"https://v.example/aweme/v1/playwm/?id=1&watermark=1","cover":"aHR0cHM6Ly9pLmV4YW1wbGUvYy5qcGc=",
            "media_url_https":"https://pbs.example/media/Gx.png","cdn":["p2.example"],"list":["/atlas/1.jpg"]}"#;
        let media = json!({"title": "", "thumbnail": "https://i.example/c.jpg", "duration": 0,
            "images": [{"url": "https://pbs.example/media/Gx?format=png&name=orig", "width": 0, "height": 0},
                       {"url": "https://p2.example/atlas/1.jpg", "width": 0, "height": 0}],
            "videos": [{"url": "https://v.example/aweme/v1/play/?id=1"}], "audios": []});
        let c = case(body, media);
        assert_eq!(facts(&c, &Rewrites::default()).problems.len(), 4);
        let declared = rewrites(json!({"rewrites": [
            {"name": "playwm→play", "doc": "d", "kind": "replace", "from": "playwm", "to": "play"},
            {"name": "no watermark", "doc": "d", "kind": "drop_params", "params": ["watermark"]},
            {"name": "b64", "doc": "d", "kind": "base64"},
            {"name": "orig", "doc": "d", "kind": "template", "key": "media_url_https", "template": "{stem}?format={ext}&name=orig"},
            {"name": "atlas", "doc": "d", "kind": "template", "key": "list", "template": "https://{first:cdn}{}"}
        ]}));
        let f = facts(&c, &declared);
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        let via: Vec<&str> = f
            .urls
            .iter()
            .map(|u| u.found.as_ref().unwrap().via.as_str())
            .collect();
        assert_eq!(via, ["b64", "orig", "atlas", "no watermark"]);
        // Its offset is where the payload (as rewritten) writes it with the parameter.
        let video = f.urls[3].found.as_ref().unwrap();
        assert_eq!(video.form, "playwm→play");
        assert_eq!(video.offset, body.find("https://v.example").unwrap());
        // A built URL is located at the value it was built from.
        let photo = f.urls[1].found.as_ref().unwrap();
        assert_eq!(photo.form, "unescaped");
        assert_eq!(photo.offset, body.find("https://pbs.example").unwrap());
    }

    #[test]
    fn a_payload_list_entry_the_expectation_dropped_fails() {
        let body = r#"{"images":[{"u":"https://cdn.example/1.jpg"},{"u":"https://cdn.example/2.jpg"},{"u":"https://cdn.example/3.jpg"}]}"#;
        let two = case(
            body,
            images(
                &[
                    ("https://cdn.example/1.jpg", 0, 0),
                    ("https://cdn.example/3.jpg", 0, 0),
                ],
                0.0,
            ),
        );
        let p = facts(&two, &Rewrites::default()).problems;
        assert!(
            p.len() == 1 && p[0].contains("3 entries, and entries [1]"),
            "{p:?}"
        );
        let three = case(
            body,
            images(
                &[
                    ("https://cdn.example/1.jpg", 0, 0),
                    ("https://cdn.example/2.jpg", 0, 0),
                    ("https://cdn.example/3.jpg", 0, 0),
                ],
                0.0,
            ),
        );
        assert!(facts(&three, &Rewrites::default()).problems.is_empty());
    }

    #[test]
    fn a_list_holders_size_is_not_each_items_size() {
        // The post states 576x1024; the rendition in its list states none.
        let body = r#"{"video":{"width":576,"height":1024,"bitrateInfo":[{"GearName":"1080","PlayAddr":{"UrlList":["https://v.example/1080.mp4"]}}]}}"#;
        let c = case(
            body,
            images(&[("https://v.example/1080.mp4", 1080, 1920)], 0.0),
        );
        let f = facts(&c, &Rewrites::default());
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert!(f.urls[0].stated_widths.is_empty());
    }

    #[test]
    fn a_url_is_found_whole_never_as_the_start_of_a_longer_one() {
        let c = case(
            r#"{"u":"https://v.example/play/?id=1&wm=1"}"#,
            images(&[("https://v.example/play/?id=1", 0, 0)], 0.0),
        );
        assert_eq!(facts(&c, &Rewrites::default()).problems.len(), 1);
    }

    #[test]
    fn the_input_is_a_payload_for_a_direct_media_url() {
        let mut c = case("", images(&[("https://cdn.example/x.jpg", 0, 0)], 0.0));
        c.input = "https://cdn.example/x.jpg".into();
        let f = facts(&c, &Rewrites::default());
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert_eq!(f.urls[0].found.as_ref().unwrap().exchange, None);
    }

    #[test]
    fn a_rewrite_needs_a_name_and_a_doc() {
        let dir = std::env::temp_dir().join(format!("anchors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(REWRITES_FILE),
            r#"{"rewrites":[{"name":"x","doc":" ","kind":"base64"}]}"#,
        )
        .unwrap();
        let err = Rewrites::load(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("name and a doc"), "{err}");
    }
}
