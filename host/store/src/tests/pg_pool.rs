//! Tests of `pg::pool`.

use crate::pg::pool::*;

#[test]
fn the_pool_holds_one_connection_per_parse_and_the_reserve_within_its_bounds() {
    assert_eq!(pool_size_for(256, None, None), 264);
    assert_eq!(pool_size_for(256, Some(40), None), 40);
    assert_eq!(pool_size_for(256, None, Some(97)), 97);
    assert_eq!(pool_size_for(256, Some(300), Some(97)), 97);
    assert_eq!(pool_size_for(10, Some(300), Some(97)), 18);
    assert_eq!(pool_size_for(0, Some(0), None), 1);
    assert_eq!(parses_for_pool(97), 89);
    assert_eq!(parses_for_pool(264), 256);
    assert_eq!(parses_for_pool(4), 1);
}
