//! Thread hand-offs of one parse: every time its work is sent to another
//! thread (the SQLite writer thread, a blocking store call) and its answer
//! sent back.
//! Counted per parse task so the cost of the path can be seen (a metric,
//! and tests that hold the count), not guessed.

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static HANDOFFS: Cell<u32>;
}

/// One trip to another thread and back: two hand-offs. Outside a counted
/// parse it counts nothing.
pub fn trip() {
    let _ = HANDOFFS.try_with(|c| c.set(c.get().saturating_add(2)));
}

/// Run `work`, counting the hand-offs it makes.
pub async fn counted<T>(work: impl Future<Output = T>) -> (T, u32) {
    HANDOFFS
        .scope(Cell::new(0), async {
            let out = work.await;
            (out, HANDOFFS.try_with(Cell::get).unwrap_or(0))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn trips_count_inside_a_scope_only() {
        trip();
        let ((), n) = counted(async {
            trip();
            tokio::task::yield_now().await;
            trip();
        })
        .await;
        assert_eq!(n, 4);
    }
}
