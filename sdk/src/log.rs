//! Logging through the host. In a component the lines reach the host's
//! tracing output with the request id; natively they go to stderr when
//! `MEDIAPARSE_SDK_LOG` is set.

pub const ERROR: u8 = 0;
pub const WARN: u8 = 1;
pub const INFO: u8 = 2;
pub const DEBUG: u8 = 3;

pub fn log(level: u8, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::guest::bindings::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("MEDIAPARSE_SDK_LOG").is_some() {
        eprintln!("[extractor level {level}] {message}");
    }
}

pub fn warn(message: &str) {
    log(WARN, message)
}

pub fn debug(message: &str) {
    log(DEBUG, message)
}
