//! The web console: plain-HTTP tests of its flows and security
//! rules (`http`, with the cookie-keeping client of `support`), and the
//! issue's flow in headless Chromium over WebDriver (`browser`).

mod browser;
mod doors;
mod http;
mod recheck;
mod signup;
pub(crate) mod support;
mod webdriver;
