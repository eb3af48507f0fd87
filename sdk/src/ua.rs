//! User-Agent presets. Each name says which browser (or client) it is,
//! because the rest of a request's fingerprint (TLS, header order) has to
//! match it; each platform keeps the exact version its fixtures recorded.
//!
//! ```
//! use mediaparse_sdk::ua;
//! assert!(ua::CHROME_139_WINDOWS.contains("Chrome/139.0.0.0"));
//! assert!(ua::SAFARI_17_IPHONE.contains("iPhone OS 17_5"));
//! ```

/// Desktop Chrome on Windows 10, by major version.
macro_rules! chrome_windows {
    ($major:literal) => {
        concat!(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/",
            $major,
            ".0.0.0 Safari/537.36"
        )
    };
}

/// Chrome 126 on Windows.
pub const CHROME_126_WINDOWS: &str = chrome_windows!(126);
/// Chrome 130 on Windows.
pub const CHROME_130_WINDOWS: &str = chrome_windows!(130);
/// Chrome 131 on Windows.
pub const CHROME_131_WINDOWS: &str = chrome_windows!(131);
/// Chrome 139 on Windows.
pub const CHROME_139_WINDOWS: &str = chrome_windows!(139);
/// Chrome 140 on Windows.
pub const CHROME_140_WINDOWS: &str = chrome_windows!(140);

/// Mobile Safari on iOS 17.5 (iPhone): Chinese platforms serve their light
/// share pages to it.
pub const SAFARI_17_IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/// WeChat's built-in browser on Windows (Chrome 120 based): app share
/// pages answer it with a page instead of an app redirect.
pub const WECHAT_CHROME_120_WINDOWS: &str = concat!(
    chrome_windows!(120),
    " MicroMessenger/7.0.20.1781(0x6700143B) NetType/WIFI WindowsWechat"
);

/// Google's crawler: some platforms serve it the server-rendered post.
pub const GOOGLEBOT: &str =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// curl 7.88: share endpoints answer a plain redirect to a command-line client.
pub const CURL: &str = "curl/7.88.1";
