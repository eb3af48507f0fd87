//! Logging through the host. In a component the lines reach the host's
//! tracing output with the request id; natively they go to stderr when
//! `MEDIAPARSE_SDK_LOG` is set.

/// Level 0.
pub const ERROR: u8 = 0;
/// Level 1.
pub const WARN: u8 = 1;
/// Level 2.
pub const INFO: u8 = 2;
/// Level 3.
pub const DEBUG: u8 = 3;

/// Log a line through the host (a component) or to stderr with `MEDIAPARSE_SDK_LOG` set (native).
///
/// ```
/// mediaparse_sdk::log::log(mediaparse_sdk::log::INFO, "planned the post request");
/// ```
pub fn log(level: u8, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::guest::bindings::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("MEDIAPARSE_SDK_LOG").is_some() {
        eprintln!("[extractor level {level}] {message}");
    }
}

/// Log at [`WARN`].
pub fn warn(message: &str) {
    log(WARN, message)
}

/// Log at [`DEBUG`].
pub fn debug(message: &str) {
    log(DEBUG, message)
}
