//! Reading Meta's web pages: the `data-sjs` JSON script blobs, the LSD
//! token (the JSON they hold is searched with [`crate::scan`]).

use serde_json::Value;

/// The text of every `<script type="application/json" … data-sjs>` blob, in order.
pub fn data_sjs_blobs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for tag in mediaparse_sdk::html::tags(html) {
        if !tag.name.eq_ignore_ascii_case("script") || tag.attr("data-sjs").is_none() {
            continue;
        }
        let Some(rest) = html.get(tag.end..) else {
            continue;
        };
        if let Some(close) = rest.find("</script") {
            out.push(rest[..close].trim());
        }
    }
    out
}

/// The LSD token of a Meta page: `<script id="__eqmc">` JSON key `l`, or
/// the `["LSD",[],{"token":"…"}` define.
pub fn lsd_token(html: &str) -> Option<String> {
    if let Some(eqmc) = mediaparse_sdk::html::script_by_id(html, "__eqmc")
        && let Ok(v) = serde_json::from_str::<Value>(eqmc)
        && let Some(l) = v.get("l").and_then(Value::as_str)
        && !l.is_empty()
    {
        return Some(l.to_string());
    }
    let marker = "[\"LSD\",[],{\"token\":\"";
    let start = html.find(marker)? + marker.len();
    let rest = &html[start..];
    let end = rest.find('"')?;
    let token = &rest[..end];
    (!token.is_empty() && token.len() < 200).then(|| token.to_string())
}

/// An id member as a non-empty string (upstreams send some as bare numbers).
pub fn id_string(v: Option<&Value>) -> Option<String> {
    mediaparse_sdk::ids::id_text(v?).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sjs_blobs_and_lsd() {
        let html = r#"<script type="application/json" data-content-len="9" data-sjs>{"a":1}</script>
<script type="application/json">{"no":1}</script><script data-sjs type="application/json">{"require":[["LSD",[],{"token":"AVq1"},323]]}</script>"#;
        assert_eq!(
            data_sjs_blobs(html),
            vec![
                r#"{"a":1}"#,
                r#"{"require":[["LSD",[],{"token":"AVq1"},323]]}"#
            ]
        );
        assert_eq!(lsd_token(html).as_deref(), Some("AVq1"));
        let eqmc = r#"<script type="application/json" id="__eqmc">{"u":"/x","l":"AVqE"}</script>"#;
        assert_eq!(lsd_token(eqmc).as_deref(), Some("AVqE"));
        assert_eq!(lsd_token("<html></html>"), None);
    }
}
