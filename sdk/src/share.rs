//! Share text: apps copy a sentence, emoji and a link; take the link.

use crate::urls::InputUrl;
use crate::{Failure, Result};

/// The URL a caller's input names: the first URL in share text, or the
/// input itself when it is one bare token (`v.douyin.com/abc/` without a
/// scheme). `platform` names the platform in the failure.
///
/// ```
/// use mediaparse_sdk::share::input_url;
/// assert_eq!(input_url("看看 https://v.douyin.com/abc/ 复制", "Douyin").unwrap().host, "v.douyin.com");
/// assert_eq!(input_url(" v.douyin.com/abc/ ", "Douyin").unwrap().segments, ["abc"]);
/// assert!(input_url("no link here", "Douyin").is_err());
/// ```
pub fn input_url(input: &str, platform: &str) -> Result<InputUrl> {
    let candidate = match first_url(input) {
        Some(url) => url,
        None => {
            let trimmed = input.trim();
            if trimmed.is_empty() || trimmed.contains(char::is_whitespace) {
                return Err(Failure::unsupported(format!(
                    "no {platform} URL in the input"
                )));
            }
            trimmed.to_string()
        }
    };
    InputUrl::parse(&candidate)
}

/// The first http(s) URL in `text`, with trailing punctuation and markdown
/// syntax removed. `None` when there is none.
pub fn first_url(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let start = [lower.find("https://"), lower.find("http://")]
        .into_iter()
        .flatten()
        .min()?;
    let rest = &text[start..];
    // A URL in share text is ASCII; the first space, CJK character or emoji ends it.
    let end = rest
        .find(|c: char| {
            c.is_whitespace()
                || !c.is_ascii()
                || matches!(c, '<' | '>' | '"' | '`' | '|' | '\\' | '^' | '{' | '}')
        })
        .unwrap_or(rest.len());
    let mut url = &rest[..end];
    // Markdown link `[text](url)`: the closing parenthesis is not the URL's.
    let in_markdown = text[..start].ends_with("](");
    loop {
        let trimmed = url.trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', '*']);
        let trimmed = match trimmed.strip_suffix(')') {
            Some(inner)
                if in_markdown || inner.matches('(').count() < inner.matches(')').count() + 1 =>
            {
                inner
            }
            _ => trimmed,
        };
        let trimmed = trimmed.strip_suffix(']').unwrap_or(trimmed);
        if trimmed.len() == url.len() {
            break;
        }
        url = trimmed;
    }
    (url.len() > "https://".len()).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::first_url;

    #[test]
    fn extracts_from_real_looking_share_text() {
        let cases = [
            (
                "7.43 复制打开抖音，看看【某某的作品】好看 https://v.douyin.com/iRNBho6u/ abc:/ 01/07 X@m.Qk",
                "https://v.douyin.com/iRNBho6u/",
            ),
            (
                "https://v.douyin.com/iRNBho6u/复制此链接，打开Dou音搜索，直接观看视频！",
                "https://v.douyin.com/iRNBho6u/",
            ),
            (
                "see [this](https://www.tiktok.com/@a/video/1).",
                "https://www.tiktok.com/@a/video/1",
            ),
            (
                "HTTPS://WWW.TIKTOK.COM/@a/video/1, nice",
                "HTTPS://WWW.TIKTOK.COM/@a/video/1",
            ),
            (
                "(https://en.wikipedia.org/wiki/A_(b))",
                "https://en.wikipedia.org/wiki/A_(b)",
            ),
            (
                "【小红书】 http://xhslink.com/a/AbC123 😆 点击链接",
                "http://xhslink.com/a/AbC123",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(first_url(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn none_without_a_url() {
        assert_eq!(first_url("no link here"), None);
        assert_eq!(first_url("https://"), None);
        assert_eq!(first_url(""), None);
    }
}
