//! Tests of `usage`.

use crate::tests::both::each_backend;
use crate::usage::*;

#[test]
fn filters_by_account_key_platform_and_half_open_time_range() {
    each_backend(|t| {
        let store = &t.store;
        store.add_credits("a", 100, 0).unwrap();
        store.add_credits("b", 100, 0).unwrap();
        for (account, key, platform, credits, t) in [
            ("a", "k1", "tiktok", 1, 100),
            ("a", "k1", "youtube", 3, 200),
            ("a", "k2", "youtube", 3, 300),
            ("b", "k3", "tiktok", 1, 400),
        ] {
            store
                .charge(account, key, platform, credits, &format!("r{t}"), t)
                .unwrap();
        }
        let q = |f: UsageFilter| store.usage(&UsageFilter { entries: 10, ..f }).unwrap();
        let all = q(UsageFilter::default());
        assert_eq!((all.requests, all.credits), (4, 8));
        assert_eq!(all.entries[0].request_id, "r400", "most recent first");
        let a = q(UsageFilter {
            account: Some("a".into()),
            ..Default::default()
        });
        assert_eq!((a.requests, a.credits), (3, 7));
        assert_eq!(a.by_platform[0].name, "youtube");
        assert_eq!(
            (a.by_platform[0].requests, a.by_platform[0].credits),
            (2, 6)
        );
        assert_eq!(a.by_key.len(), 2);
        let k1 = q(UsageFilter {
            key: Some("k1".into()),
            ..Default::default()
        });
        assert_eq!(k1.credits, 4);
        let yt = q(UsageFilter {
            platform: Some("youtube".into()),
            from: Some(200),
            until: Some(300),
            ..Default::default()
        });
        assert_eq!(
            (yt.requests, yt.credits),
            (1, 3),
            "from inclusive, until exclusive"
        );
        let few = store
            .usage(&UsageFilter {
                entries: 1,
                ..Default::default()
            })
            .unwrap();
        assert_eq!((few.requests, few.entries.len()), (4, 1));
    });
}
