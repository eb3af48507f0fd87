//! Tests of `jobs`.

use crate::jobs::*;
use crate::tests::both::{each_backend, postgres};

fn job(id: &str, created_ms: i64) -> JobRecord {
    JobRecord {
        id: id.into(),
        account_id: "acme".into(),
        key_id: "key_1".into(),
        request: "{}".into(),
        callback_url: None,
        state: "queued".into(),
        item_count: 2,
        created_ms,
        finished_ms: None,
    }
}

#[test]
fn a_job_is_claimed_once_keeps_its_first_answers_and_is_pruned_after_it_is_done() {
    each_backend(|t| {
        let s = &t.store;
        s.insert_job(&job("job_a", 1)).unwrap();
        assert_eq!(s.job("job_a").unwrap().unwrap().state, "queued");
        let claimed = s.claim_jobs(10, 100, 5, "host1").unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].state, "running");
        // A live lease: no other host takes it.
        assert!(s.claim_jobs(50, 100, 5, "host2").unwrap().is_empty());
        assert!(s.renew_job_lease("job_a", "host1", 200).unwrap());
        assert!(s.claim_jobs(150, 100, 5, "host2").unwrap().is_empty());
        // The lease lapses: another host takes the job over.
        assert_eq!(s.claim_jobs(250, 100, 5, "host2").unwrap().len(), 1);
        assert!(!s.renew_job_lease("job_a", "host1", 400).unwrap());
        s.record_job_item("job_a", 1, "first").unwrap();
        s.record_job_item("job_a", 1, "second").unwrap();
        s.record_job_item("job_a", 0, "zero").unwrap();
        assert_eq!(
            s.job_answers("job_a").unwrap(),
            vec![(0, "zero".to_string()), (1, "first".to_string())]
        );
        s.finish_job("job_a", 1_000).unwrap();
        let done = s.job("job_a").unwrap().unwrap();
        assert_eq!(
            (done.state.as_str(), done.finished_ms),
            ("done", Some(1_000))
        );
        assert!(s.claim_jobs(10_000, 100, 5, "host3").unwrap().is_empty());
        // Kept until its retention ends, then removed with its items.
        assert_eq!(s.prune_jobs(1_000).unwrap(), 0);
        assert_eq!(s.prune_jobs(1_001).unwrap(), 1);
        assert_eq!(s.job("job_a").unwrap(), None);
        assert!(s.job_answers("job_a").unwrap().is_empty());
    });
}

#[test]
fn concurrent_claims_on_postgres_never_share_a_job() {
    let t = postgres();
    for i in 0..20 {
        t.store.insert_job(&job(&format!("job_{i}"), i)).unwrap();
    }
    let claims: Vec<Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|h| {
                let store = t.store.clone();
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    for _ in 0..10 {
                        for j in store.claim_jobs(10, 60_000, 2, &format!("h{h}")).unwrap() {
                            mine.push(j.id);
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<String> = claims.into_iter().flatten().collect();
    assert_eq!(all.len(), 20);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20);
}
