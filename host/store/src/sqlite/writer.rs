//! The SQLite writer thread: the parse path's writes (charges, idempotency
//! claims and completions, the client's request id) queue here and share
//! one commit. The thread takes what is queued (at most [`MAX_GROUP`]
//! writes), runs it in one transaction on the store's write connection,
//! each write inside its own savepoint (a write that fails is rolled back
//! alone, the others of its group stay), then commits once — one `fsync`
//! under `synchronous=FULL` for the whole group — and only then answers each
//! caller. No caller hears of its write before the write is durable; a group
//! whose commit fails answers every member with that error (nothing of the
//! group was written).
//!
//! The thread locks the same connection other writers use (the admin and
//! console writes, which keep their blocking path), so this process still
//! has one SQLite writer. While it holds the write lock it says so
//! ([`WriterThread::holds_write_lock`]): no other process can commit then,
//! which lets key lookups and the balance pre-check go on without waiting
//! for the group (see `Store::key_by_token_hash`, `Store::balance_for_charge`).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::lock;
use crate::key_cache::KeyCache;
use crate::{StoreError, StoreResult};

/// The most writes one group (one transaction, one `fsync`) carries.
pub const MAX_GROUP: usize = 256;

/// Groups and writes this store's writer thread committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transactions committed (one `fsync` each).
    pub groups: u64,
    /// Writes answered after those commits (a write rolled back to its
    /// savepoint counts too: its caller was answered after the commit).
    pub writes: u64,
}

/// One queued write, its outcome kept until its group's commit says
/// whether it may be told.
trait QueuedWrite: Send {
    /// Run the write on `c`, inside its savepoint; whether it succeeded.
    fn run(&mut self, c: &Connection) -> bool;
    /// Answer the caller: its own outcome, or `group_failed` when the
    /// group was not committed.
    fn answer(self: Box<Self>, group_failed: Option<&rusqlite::Error>);
}

/// Where a write's outcome goes.
enum Reply<T> {
    Async(tokio::sync::oneshot::Sender<StoreResult<T>>),
    Blocking(mpsc::SyncSender<StoreResult<T>>),
}

struct Pending<T, F> {
    work: Option<F>,
    outcome: Option<StoreResult<T>>,
    reply: Reply<T>,
}

impl<T, F> QueuedWrite for Pending<T, F>
where
    T: Send,
    F: FnOnce(&Connection) -> StoreResult<T> + Send,
{
    fn run(&mut self, c: &Connection) -> bool {
        let Some(work) = self.work.take() else {
            return false;
        };
        let outcome = work(c);
        let ok = outcome.is_ok();
        self.outcome = Some(outcome);
        ok
    }

    fn answer(self: Box<Self>, group_failed: Option<&rusqlite::Error>) {
        let outcome = match (group_failed, self.outcome) {
            (Some(e), _) => Err(StoreError::Sqlite(copy_error(e))),
            (None, Some(outcome)) => outcome,
            (None, None) => Err(StoreError::Invalid("the write did not run".into())),
        };
        // A caller that stopped waiting (its request was dropped) is not told.
        match self.reply {
            Reply::Async(tx) => {
                let _ = tx.send(outcome);
            }
            Reply::Blocking(tx) => {
                let _ = tx.send(outcome);
            }
        }
    }
}

/// The handle the store keeps: the queue into the thread, and what the
/// thread reports. Dropping it ends the thread once the queued writes are
/// answered, and waits for that: the connection is closed when the store is.
pub(crate) struct WriterThread {
    queue: Option<mpsc::Sender<Box<dyn QueuedWrite>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    state: Arc<State>,
}

impl Drop for WriterThread {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take()
            // A write that held the store's last handle ends on the thread itself.
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

/// What the thread shares with the store.
#[derive(Default)]
struct State {
    holds_write_lock: AtomicBool,
    groups: AtomicU64,
    writes: AtomicU64,
}

impl WriterThread {
    /// Start the thread writing on `conn` (the store's write connection);
    /// it checks `keys` against other processes' commits under each
    /// group's write lock.
    pub(crate) fn start(
        conn: Arc<Mutex<Connection>>,
        keys: Arc<KeyCache>,
    ) -> StoreResult<WriterThread> {
        let (queue, writes) = mpsc::channel::<Box<dyn QueuedWrite>>();
        let state = Arc::new(State::default());
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                while let Ok(first) = writes.recv() {
                    // The connection first, then what queued meanwhile: the
                    // writes that arrived while another writer held it join
                    // this group.
                    let c = lock(&conn);
                    let mut group = vec![first];
                    while group.len() < MAX_GROUP {
                        match writes.try_recv() {
                            Ok(w) => group.push(w),
                            Err(_) => break,
                        }
                    }
                    commit_group(c, &keys, &thread_state, group);
                }
            })
            .map_err(|e| StoreError::Invalid(format!("cannot start the SQLite writer: {e}")))?;
        Ok(WriterThread {
            queue: Some(queue),
            thread: Some(thread),
            state,
        })
    }

    /// Queue `work` and wait (blocking this thread) for its group's commit.
    pub(crate) fn write<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        self.submit(work, Reply::Blocking(tx))?;
        rx.recv().map_err(|_| stopped())?
    }

    /// Queue `work` and await its group's commit, holding no thread.
    pub(crate) async fn write_async<T, F>(&self, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(work, Reply::Async(tx))?;
        rx.await.map_err(|_| stopped())?
    }

    fn submit<T, F>(&self, work: F, reply: Reply<T>) -> StoreResult<()>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let pending = Pending {
            work: Some(work),
            outcome: None,
            reply,
        };
        let queue = self.queue.as_ref().ok_or_else(stopped)?;
        queue.send(Box::new(pending)).map_err(|_| stopped())
    }

    /// Whether the thread holds the database's write lock right now, having
    /// checked the key cache under it: no other connection can commit until
    /// it lets go.
    pub(crate) fn holds_write_lock(&self) -> bool {
        self.state.holds_write_lock.load(Ordering::SeqCst)
    }

    pub(crate) fn stats(&self) -> CommitStats {
        CommitStats {
            groups: self.state.groups.load(Ordering::SeqCst),
            writes: self.state.writes.load(Ordering::SeqCst),
        }
    }
}

fn stopped() -> StoreError {
    StoreError::Invalid("the SQLite writer thread stopped".into())
}

/// Run `group` in one transaction and answer each member once it is
/// committed (or with the error that kept it from committing).
fn commit_group(
    c: std::sync::MutexGuard<'_, Connection>,
    keys: &KeyCache,
    state: &State,
    mut group: Vec<Box<dyn QueuedWrite>>,
) {
    if let Err(e) = c.execute_batch("BEGIN IMMEDIATE") {
        return answer_all(group, Some(&e));
    }
    // Nobody else can commit while the write lock is held: what the key
    // cache holds is checked against other processes' commits now, and
    // stays right until the lock is let go.
    match c
        .prepare_cached("PRAGMA data_version")
        .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
    {
        Ok(version) => {
            keys.observe_data_version(version);
            state.holds_write_lock.store(true, Ordering::SeqCst);
        }
        Err(e) => return rolled_back(&c, group, &e),
    }
    for write in group.iter_mut() {
        if let Err(e) = c.execute_batch("SAVEPOINT queued_write") {
            state.holds_write_lock.store(false, Ordering::SeqCst);
            return rolled_back(&c, group, &e);
        }
        // A write that panics is a failed write: rolled back, its caller
        // told it did not run.
        let ok = std::panic::catch_unwind(AssertUnwindSafe(|| write.run(&c))).unwrap_or(false);
        if c.is_autocommit() {
            // SQLite itself rolled the whole transaction back (an I/O
            // error, a full disk): nothing of the group was written.
            state.holds_write_lock.store(false, Ordering::SeqCst);
            let e = rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                Some("the transaction was rolled back".into()),
            );
            return answer_all(group, Some(&e));
        }
        let end = if ok {
            "RELEASE queued_write"
        } else {
            "ROLLBACK TO queued_write; RELEASE queued_write"
        };
        if let Err(e) = c.execute_batch(end) {
            state.holds_write_lock.store(false, Ordering::SeqCst);
            return rolled_back(&c, group, &e);
        }
    }
    let committed = c.execute_batch("COMMIT");
    // Another process may commit from here on (it may have taken the lock
    // an instant ago, as COMMIT let go of it, but a commit of its own, with
    // its own fsync, cannot have finished in that instant).
    state.holds_write_lock.store(false, Ordering::SeqCst);
    match committed {
        Ok(()) => {
            let n = group.len() as u64;
            state.groups.fetch_add(1, Ordering::SeqCst);
            state.writes.fetch_add(n, Ordering::SeqCst);
            mediaparse_metrics::global().store_commit(n);
            drop(c);
            answer_all(group, None);
        }
        Err(e) => rolled_back(&c, group, &e),
    }
}

/// End a group that cannot commit: roll back what is still open and tell
/// every member `e`.
fn rolled_back(c: &Connection, group: Vec<Box<dyn QueuedWrite>>, e: &rusqlite::Error) {
    if !c.is_autocommit() {
        let _ = c.execute_batch("ROLLBACK");
    }
    answer_all(group, Some(e));
}

fn answer_all(group: Vec<Box<dyn QueuedWrite>>, group_failed: Option<&rusqlite::Error>) {
    if let Some(e) = group_failed {
        tracing::warn!(error = %e, writes = group.len(), "a write group was not committed");
    }
    for write in group {
        write.answer(group_failed);
    }
}

/// The same error for each member of a failed group (a busy database stays
/// a busy database: `503 store_busy`).
fn copy_error(e: &rusqlite::Error) -> rusqlite::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            rusqlite::Error::SqliteFailure(*code, message.clone())
        }
        other => rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    }
}

/// A write queued for this thread, its arguments owned: it runs inside its
/// group's transaction, in a savepoint of its own.
pub(crate) type Work<T> = Box<dyn FnOnce(&rusqlite::Connection) -> StoreResult<T> + Send>;
