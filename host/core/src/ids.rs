//! Random identifiers for keys and requests.

use rand::RngCore;

/// A short random identifier with a readable prefix (`key_3f9a…`, `req_…`).
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 6];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}_{}", hex::encode(bytes))
}

/// A request id that keys the ledger: `req_` and 32 hex digits, the first
/// 12 the Unix time in milliseconds, the other 20 random (80 bits, so ids
/// stay unguessable and unique within a millisecond).
///
/// Time first, because the ledger's unique index on the request id takes
/// one insert per charge: ids in the order they are minted land on the
/// index's last page, which every charge of a commit group shares and the
/// page cache holds, where random ids would each dirty (and on a large
/// ledger first read) a page of their own.
pub fn new_request_id() -> String {
    let ms = crate::clock::unix_now_ms();
    let mut random = [0u8; 10];
    rand::rng().fill_bytes(&mut random);
    format!("req_{:012x}{}", ms & 0xffff_ffff_ffff, hex::encode(random))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_32_hex_digits_and_sort_in_minting_order() {
        let first = new_request_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = new_request_id();
        for id in [&first, &second] {
            let hex = id.strip_prefix("req_").expect("prefix");
            assert_eq!(hex.len(), 32, "{id}");
            assert!(
                hex.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{id}"
            );
        }
        assert!(first < second, "{first} then {second}");
        // The random part differs within one millisecond.
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_request_id()).collect();
        assert_eq!(ids.len(), 1000);
    }
}
