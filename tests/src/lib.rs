//! Test support shared by the end-to-end suite and `cargo xtask demo`:
//! a fake upstream that honours the upstream-override contract and replays
//! fixture cases, and a handle on a real `mediaparse serve` process.

pub mod contract;
pub mod fake_cdn;
pub mod fake_upstream;
pub mod faults;
pub mod guest;
pub mod media;
pub mod paths;
pub mod python;
pub mod service;
pub mod skip;
