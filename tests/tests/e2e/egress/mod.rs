//! Egress (issue 14): exit pools through real proxy processes (`tinyproxy`
//! for HTTP, `danted` for SOCKS5, Debian packages `cargo xtask test`
//! installs), cooling-off and the `503` when every exit cools, and what
//! operators see. The service runs the test guest against the fake upstream
//! on loopback, so the proxies are configured to reach 127.0.0.1.

mod exits;
mod proxies;
mod sessions;
