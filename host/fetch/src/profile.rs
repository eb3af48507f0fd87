//! Which TLS/HTTP2 identity an upstream request leaves with.
//!
//! A platform's `platform.toml` names a default `fetch_profile` (absent:
//! `rustls`), the operator may force one per platform, and `browser` follows
//! the User-Agent the extractor planned. Either way the User-Agent, client
//! hints and header order then follow the profile ([`super::identity`]), so
//! the TLS ClientHello, the HTTP/2 preface and the headers tell one story.

use std::fmt;

/// A `fetch_profile` setting (platform default or operator override).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProfileSetting {
    /// Impersonate the browser or app the request's User-Agent names.
    Browser,
    /// Always this identity.
    Fixed(FetchProfile),
    /// Today's reqwest + rustls client.
    #[default]
    Rustls,
}

/// One identity a request can leave with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FetchProfile {
    Chrome,
    Safari,
    Firefox,
    OkHttp,
    Rustls,
}

/// The device a browser identity claims (drives a profile's platform hints).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    Windows,
    MacOs,
    Linux,
    Android,
    Ios,
}

#[derive(Debug, thiserror::Error)]
#[error("fetch_profile {0:?} is not one of browser, chrome, safari, firefox, okhttp, rustls")]
pub struct UnknownProfile(pub String);

impl ProfileSetting {
    /// Parse a `fetch_profile` value (`mediaparse_catalogue::FETCH_PROFILES`).
    pub fn parse(value: &str) -> Result<ProfileSetting, UnknownProfile> {
        Ok(match value.trim() {
            "browser" => ProfileSetting::Browser,
            "rustls" => ProfileSetting::Rustls,
            "chrome" => ProfileSetting::Fixed(FetchProfile::Chrome),
            "safari" => ProfileSetting::Fixed(FetchProfile::Safari),
            "firefox" => ProfileSetting::Fixed(FetchProfile::Firefox),
            "okhttp" => ProfileSetting::Fixed(FetchProfile::OkHttp),
            other => return Err(UnknownProfile(other.to_string())),
        })
    }

    /// The identity for one request whose User-Agent is `user_agent`.
    pub fn resolve(self, user_agent: Option<&str>) -> FetchProfile {
        match self {
            ProfileSetting::Rustls => FetchProfile::Rustls,
            ProfileSetting::Fixed(p) => p,
            ProfileSetting::Browser => user_agent.map_or(FetchProfile::Chrome, profile_for_agent),
        }
    }
}

impl fmt::Display for FetchProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FetchProfile::Chrome => "chrome",
            FetchProfile::Safari => "safari",
            FetchProfile::Firefox => "firefox",
            FetchProfile::OkHttp => "okhttp",
            FetchProfile::Rustls => "rustls",
        })
    }
}

/// The browser or HTTP stack a User-Agent names; Chrome when it names none
/// we impersonate (most traffic is Chromium's).
pub fn profile_for_agent(user_agent: &str) -> FetchProfile {
    let ua = user_agent.to_ascii_lowercase();
    if ua.contains("okhttp") {
        FetchProfile::OkHttp
    } else if ua.contains("firefox/") && !ua.contains("seamonkey") {
        FetchProfile::Firefox
    } else if ua.contains("safari/")
        && ua.contains("version/")
        && !["chrome/", "chromium/", "crios/", "fxios/", "edg", "android"]
            .iter()
            .any(|m| ua.contains(m))
    {
        FetchProfile::Safari
    } else {
        FetchProfile::Chrome
    }
}

/// The device a User-Agent claims; desktop Windows when it says nothing.
pub fn device_for_agent(user_agent: Option<&str>) -> Device {
    let ua = user_agent.unwrap_or_default().to_ascii_lowercase();
    if ua.contains("iphone") || ua.contains("ipad") || ua.contains("ipod") {
        Device::Ios
    } else if ua.contains("android") || ua.contains("okhttp") {
        Device::Android
    } else if ua.contains("macintosh") || ua.contains("mac os x") {
        Device::MacOs
    } else if ua.contains("linux") || ua.contains("x11") {
        Device::Linux
    } else {
        Device::Windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1.1 Mobile/15E148 Safari/604.1";
    const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    const CRIOS: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1";
    const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
    const OKHTTP: &str = "okhttp/4.12.0";

    #[test]
    fn browser_follows_the_user_agent() {
        let b = ProfileSetting::Browser;
        assert_eq!(b.resolve(Some(IPHONE)), FetchProfile::Safari);
        assert_eq!(b.resolve(Some(CHROME)), FetchProfile::Chrome);
        assert_eq!(b.resolve(Some(CRIOS)), FetchProfile::Chrome);
        assert_eq!(b.resolve(Some(FIREFOX)), FetchProfile::Firefox);
        assert_eq!(b.resolve(Some(OKHTTP)), FetchProfile::OkHttp);
        assert_eq!(b.resolve(None), FetchProfile::Chrome);
        assert_eq!(device_for_agent(Some(IPHONE)), Device::Ios);
        assert_eq!(device_for_agent(Some(CHROME)), Device::Windows);
        assert_eq!(device_for_agent(Some(FIREFOX)), Device::Linux);
        assert_eq!(device_for_agent(Some(OKHTTP)), Device::Android);
    }

    #[test]
    fn a_forced_profile_ignores_the_user_agent() {
        let forced = ProfileSetting::parse("okhttp").unwrap();
        assert_eq!(forced.resolve(Some(IPHONE)), FetchProfile::OkHttp);
        assert_eq!(
            ProfileSetting::parse("rustls")
                .unwrap()
                .resolve(Some(IPHONE)),
            FetchProfile::Rustls
        );
        assert_eq!(ProfileSetting::default(), ProfileSetting::Rustls);
        assert!(ProfileSetting::parse("edge").is_err());
        for value in mediaparse_catalogue::FETCH_PROFILES {
            assert!(ProfileSetting::parse(value).is_ok(), "{value}");
        }
    }
}
