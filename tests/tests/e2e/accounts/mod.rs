//! Keys, accounts and credits end to end: the real binary, a real
//! SQLite file, the real TikTok component, real HTTP to a fake upstream that
//! replays TikTok fixture cases. One module per topic.

mod admin;
mod billing;
mod expiry;
mod lifecycle;
mod rate_limit;
pub(crate) mod support;
