//! Tests of `tunnel_usage`.

use crate::tests::both::each_backend;
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

#[test]
fn tunnel_traffic_adds_up_per_day_key_and_platform() {
    each_backend(|t| {
        let s = &t.store;
        for (key, platform, at, bytes) in [
            ("k1", "youtube", DAY + 1, 100),
            ("k1", "youtube", DAY + 2, 50),
            ("k2", "tiktok", DAY + 3, 30),
            ("k1", "youtube", 2 * DAY, 7),
        ] {
            s.record_tunnel_traffic(&TunnelTraffic {
                account: "acme",
                key,
                platform,
                at,
                bytes,
                streams: 1,
            })
            .unwrap();
        }
        assert_eq!(s.tunnel_bytes_on_day("k1", DAY + 9).unwrap(), 150);
        assert_eq!(s.tunnel_bytes_on_day("k1", 5 * DAY).unwrap(), 0);
        let usage = s
            .tunnel_usage(&UsageFilter {
                account: Some("acme".into()),
                from: Some(DAY),
                until: Some(2 * DAY),
                ..Default::default()
            })
            .unwrap();
        assert_eq!((usage.bytes, usage.streams), (180, 3));
        let keys: Vec<(&str, i64)> = usage
            .by_key
            .iter()
            .map(|g| (g.name.as_str(), g.bytes))
            .collect();
        assert_eq!(keys, [("k1", 150), ("k2", 30)]);
    });
}
