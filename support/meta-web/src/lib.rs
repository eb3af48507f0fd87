//! What Instagram and Threads share, being the same Meta web stack: reading
//! their pages (`data-sjs` blobs, LSD token), the homepage session, the
//! logged-out GraphQL query, share-link hops, the strategy cascade,
//! shortcodes and media labels. Each extractor keeps only what differs:
//! its URL shapes, its strategies' order and its answer shapes.

pub mod cascade;
pub mod graphql;
pub mod media;
pub mod page;
pub mod session;
pub mod share;
pub mod shortcode;

pub use media::{Candidate, best_candidate, video_quality};
pub use page::{data_sjs_blobs, find_key, find_object, id_string, lsd_token};

/// The Chrome `User-Agent` both sites' web flows send (and media downloads need).
pub const CHROME_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";
