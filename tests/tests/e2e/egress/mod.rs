//! Egress: exit pools through real proxy processes (`tinyproxy`
//! for HTTP, `danted` for SOCKS5, Debian packages `cargo xtask test`
//! installs), cooling-off and the `503` when every exit cools, what
//! operators see, sessions picking up every redirect hop's cookies, and
//! tunnelled media leaving through its parse's exit. The service runs
//! against the fake upstream on loopback, so the proxies reach 127.0.0.1.

mod exits;
mod proxies;
mod sessions;
mod tunnel;
