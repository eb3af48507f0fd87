//! Tests of `tunnel_usage`.

use crate::tunnel_usage::*;
use crate::*;

fn traffic<'a>(key: &'a str, platform: &'a str, at: i64, bytes: i64) -> TunnelTraffic<'a> {
    TunnelTraffic {
        account: "acme",
        key,
        platform,
        at,
        bytes,
        streams: 1,
    }
}

#[test]
fn traffic_adds_up_per_day_key_and_platform() {
    crate::tests::both::each_backend(|t| traffic_adds_up(&t.store));
}

fn traffic_adds_up(store: &Store) {
    let day2 = 2 * DAY;
    store
        .record_tunnel_traffic(&traffic("k1", "tiktok", day2 + 5, 100))
        .unwrap();
    store
        .record_tunnel_traffic(&traffic("k1", "tiktok", day2 + 50, 20))
        .unwrap();
    store
        .record_tunnel_traffic(&traffic("k1", "bilibili", day2 + 60, 3))
        .unwrap();
    store
        .record_tunnel_traffic(&traffic("k2", "tiktok", day2 + 60, 7))
        .unwrap();
    // The next day starts from zero.
    store
        .record_tunnel_traffic(&traffic("k1", "tiktok", 3 * DAY, 1000))
        .unwrap();
    assert_eq!(store.tunnel_bytes_on_day("k1", day2 + 1).unwrap(), 123);
    assert_eq!(store.tunnel_bytes_on_day("k1", 3 * DAY + 9).unwrap(), 1000);
    assert_eq!(store.tunnel_bytes_on_day("k3", day2).unwrap(), 0);

    let all = store.tunnel_usage(&UsageFilter::default()).unwrap();
    assert_eq!((all.bytes, all.streams), (1130, 5));
    assert_eq!(all.by_key[0].name, "k1");
    assert_eq!(all.by_key[0].bytes, 1123);
    let on_day2 = store
        .tunnel_usage(&UsageFilter {
            key: Some("k1".into()),
            from: Some(day2),
            until: Some(3 * DAY),
            ..UsageFilter::default()
        })
        .unwrap();
    assert_eq!(on_day2.bytes, 123);
    assert_eq!(
        on_day2.by_platform,
        vec![
            TunnelUsageGroup {
                name: "tiktok".into(),
                bytes: 120,
                streams: 2
            },
            TunnelUsageGroup {
                name: "bilibili".into(),
                bytes: 3,
                streams: 1
            },
        ]
    );
}
