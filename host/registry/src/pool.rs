//! The wasm worker pool: guest calls run on a few threads of their own, as
//! many as the machine has cores, not on tokio's blocking pool (up to 512
//! threads, shared with SQLite). Guests then never make the store's work
//! (auth, the charge) queue behind them, and more guests than cores only
//! wait in this pool's queue instead of time-slicing each other.
//!
//! A parse hands one job over per guest call sequence (instantiate and
//! detect together; then one `step` per round). A parse that stops waiting
//! (its deadline passed) cancels its [`Cancel`]: a job not yet started runs
//! its guest into an immediate interrupt, and a running guest is interrupted
//! at the next epoch tick (`runtime.rs`), so its thread is free at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// A fixed set of worker threads fed from one queue (started on first use).
pub struct WasmPool {
    threads: usize,
    queue: OnceLock<Mutex<mpsc::Sender<Job>>>,
}

/// The pool stopped, or a job panicked before answering.
#[derive(Debug, thiserror::Error)]
#[error("wasm worker failed: {0}")]
pub struct PoolError(&'static str);

impl WasmPool {
    /// A pool of `threads` workers (at least one).
    pub fn new(threads: usize) -> WasmPool {
        WasmPool {
            threads: threads.max(1),
            queue: OnceLock::new(),
        }
    }

    /// One worker per core.
    pub fn per_core() -> WasmPool {
        WasmPool::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// The process's pool, one worker per core: every parse's guest calls.
    pub fn global() -> &'static WasmPool {
        static POOL: OnceLock<WasmPool> = OnceLock::new();
        POOL.get_or_init(WasmPool::per_core)
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    fn sender(&self) -> mpsc::Sender<Job> {
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let rx = Arc::new(Mutex::new(rx));
            for i in 0..self.threads {
                let rx = rx.clone();
                let spawned = std::thread::Builder::new()
                    .name(format!("wasm-{i}"))
                    .spawn(move || worker(&rx));
                if let Err(e) = spawned {
                    tracing::error!(error = %e, "cannot start a wasm worker thread");
                }
            }
            Mutex::new(tx)
        });
        queue.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Run `f` on a worker; the answer comes back when it is done.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            // A panicking guest call must not take the worker down with it.
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            if let Ok(out) = out {
                let _ = tx.send(out);
            }
        });
        self.sender()
            .send(job)
            .map_err(|_| PoolError("the pool has stopped"))?;
        rx.await.map_err(|_| PoolError("the job panicked"))
    }
}

fn worker(rx: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
            rx.recv()
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Set when the parse a guest works for has stopped waiting for it.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A guard that cancels when dropped, unless [`CancelOnDrop::disarm`]ed:
    /// held by the future awaiting a guest call.
    pub fn on_drop(&self) -> CancelOnDrop {
        CancelOnDrop(Some(self.clone()))
    }
}

pub struct CancelOnDrop(Option<Cancel>);

impl CancelOnDrop {
    /// The call answered: nothing to cancel.
    pub fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn jobs_run_on_the_pool_threads_and_answer() {
        let pool = WasmPool::new(2);
        let name = pool
            .run(|| std::thread::current().name().map(str::to_string))
            .await
            .unwrap();
        assert!(name.is_some_and(|n| n.starts_with("wasm-")));
        let sums = futures::future::join_all((0..16u64).map(|i| pool.run(move || i * 2))).await;
        let sums: Vec<u64> = sums.into_iter().map(Result::unwrap).collect();
        assert_eq!(sums, (0..16u64).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_panicking_job_answers_an_error_and_the_worker_survives() {
        let pool = WasmPool::new(1);
        assert!(pool.run(|| panic!("guest host bug")).await.is_err());
        assert_eq!(pool.run(|| 7).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn dropping_the_waiting_future_cancels_unless_disarmed() {
        let cancel = Cancel::new();
        cancel.on_drop().disarm();
        assert!(!cancel.is_cancelled());
        let pool = WasmPool::new(1);
        let guard = cancel.on_drop();
        let waiting = async move {
            let _guard = guard;
            pool.run(|| std::thread::sleep(Duration::from_millis(200)))
                .await
        };
        let timed_out = tokio::time::timeout(Duration::from_millis(20), waiting).await;
        assert!(timed_out.is_err());
        assert!(cancel.is_cancelled());
    }
}
