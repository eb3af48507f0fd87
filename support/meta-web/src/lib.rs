//! What Instagram and Threads share, being the same Meta web stack: reading
//! their pages (`data-sjs` blobs, LSD token), the homepage session, the
//! logged-out GraphQL query, share-link hops, the strategy cascade,
//! shortcodes and media labels. Each extractor keeps only what differs:
//! its URL shapes, its strategies' order and its answer shapes.

pub mod cascade;
pub mod graphql;
pub mod item;
pub mod media;
pub mod page;
pub mod scan;
pub mod session;
pub mod share;
pub mod shortcode;

pub use media::{Candidate, best_candidate, video_quality};
pub use page::{data_sjs_blobs, id_string, lsd_token};

/// The browser both sites' web flows present (and media downloads need).
pub const CHROME_UA: &str = mediaparse_sdk::ua::CHROME_140_WINDOWS;
