//! The expiry a media URL carries itself, so a token never outlives the URL
//! it wraps. CDNs spell it in the query: TikTok/Douyin `x-expires`,
//! YouTube `expire`, Bilibili `deadline`, generic `expires`, all unix
//! seconds; Instagram/Facebook `oe`, unix seconds in hex.

/// The URL's own expiry, unix seconds, when its query encodes one.
pub fn url_expiry(media_url: &str) -> Option<i64> {
    let url = url::Url::parse(media_url).ok()?;
    url.query_pairs().find_map(|(name, value)| {
        let seconds = match name.as_ref() {
            "x-expires" | "expire" | "expires" | "deadline" => value.parse::<i64>().ok(),
            "oe" => i64::from_str_radix(&value, 16).ok(),
            _ => None,
        }?;
        // Anything else (milliseconds, a duration) is not a unix-seconds date.
        (1_000_000_000..100_000_000_000)
            .contains(&seconds)
            .then_some(seconds)
    })
}

#[cfg(test)]
mod tests {
    use super::url_expiry;

    #[test]
    fn reads_the_platform_spellings() {
        assert_eq!(
            url_expiry("https://v16.tiktokcdn.com/a.mp4?x-expires=1767225600&sig=1"),
            Some(1767225600)
        );
        assert_eq!(
            url_expiry("https://r1.googlevideo.com/videoplayback?expire=1767225601"),
            Some(1767225601)
        );
        assert_eq!(
            url_expiry("https://upos.bilivideo.com/a.m4s?deadline=1767225602"),
            Some(1767225602)
        );
        assert_eq!(
            url_expiry("https://scontent.cdninstagram.com/a.jpg?oe=695B5F00"),
            Some(0x695B5F00)
        );
        assert_eq!(url_expiry("https://cdn.example/a.mp4"), None);
        assert_eq!(
            url_expiry("https://cdn.example/a.mp4?expires=3600"),
            None,
            "a duration, not a date"
        );
        assert_eq!(url_expiry("not a url"), None);
    }
}
