//! The charge settle loop waits with async sleeps: while PostgreSQL is out
//! of reach and a charge keeps retrying, the blocking pool stays free for
//! other work.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Bill, charge_settled};
use mediaparse_store::{Charge, DbLocation, Store, StoreError, test_pg};

/// A loopback TCP forwarder to `target` that can be cut: open connections
/// are shut and new ones refused.
struct Forwarder {
    port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Forwarder {
    fn start(target: u16) -> Forwarder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            while !c.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                            continue;
                        };
                        let mut open = o.lock().unwrap();
                        open.push(client.try_clone().unwrap());
                        open.push(server.try_clone().unwrap());
                        pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                        pipe(server, client);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            // Dropping the listener: new connections are refused.
        });
        Forwarder { port, cut, open }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

#[test]
fn a_charge_waiting_out_an_outage_holds_no_blocking_thread() {
    let url = test_pg::fresh_database();
    let (prefix, rest) = url.split_once("127.0.0.1:").unwrap();
    let (port, path) = rest.split_once('/').unwrap();
    let forwarder = Forwarder::start(port.parse().unwrap());
    let via = format!("{prefix}127.0.0.1:{}/{path}", forwarder.port);
    let store = Store::connect(&DbLocation::Postgres(via)).unwrap();
    store.add_credits("acme", 10, 1).unwrap();
    // One blocking thread: a charge that slept on it would starve the rest.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        forwarder.cut();
        let bill = Bill {
            account: "acme".into(),
            key_id: "k1".into(),
            platform: "tiktok".into(),
            price: 1,
            request_id: "req_settle".into(),
        };
        let charging = {
            let store = store.clone();
            tokio::spawn(async move { charge_settled(&store, bill, 2).await })
        };
        // Let the charge fail a first try and start waiting.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let started = Instant::now();
        // Blocks on purpose: measures when the blocking thread is free.
        tokio::task::spawn_blocking(|| ()).await.unwrap();
        let waited = started.elapsed();
        assert!(
            !charging.is_finished(),
            "the charge is still settling (its budget is 20 s)"
        );
        // One try (a connection checkout: at most 2 s) may hold the thread;
        // the waits between tries must not.
        assert!(
            waited < Duration::from_secs(8),
            "the blocking pool was held for {waited:?} while the charge waited"
        );
        charging.abort();
    });
    runtime.shutdown_background();
}

/// PostgreSQL ends every connection, as a restart does, while the pool holds
/// far more idle connections than the charge settle loop has tries (about
/// 25 in its 20 s): the next charge still settles, because the first lost
/// connection discards every idle one from before it.
#[test]
fn a_charge_settles_after_the_server_ends_every_idle_connection_of_a_large_pool() {
    let idle = 64;
    let url = test_pg::fresh_database();
    let store = Store::connect_for_parses(&DbLocation::Postgres(url.clone()), idle, None).unwrap();
    store.add_credits("acme", 10, 1).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Both pools: the charge runs on the async one, the reads on the blocking one.
    mediaparse_store::test_pg::fill_pool(&store, idle);
    runtime.block_on(mediaparse_store::test_pg::fill_async_pool(&store, idle));
    // What a fast shutdown does to every session: FATAL 57P01
    // "terminating connection due to administrator command".
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let ended: i64 = admin
        .query_one(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()) t",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ended >= 2 * idle as i64, "{ended} sessions ended");
    drop(admin);
    let started = std::time::Instant::now();
    let bill = Bill {
        account: "acme".into(),
        key_id: "k1".into(),
        platform: "tiktok".into(),
        price: 1,
        request_id: "req_after_restart".into(),
    };
    let settled = runtime.block_on(charge_settled(&store, bill, 2));
    let took = started.elapsed();
    assert!(
        matches!(settled, Ok(Charge::Charged { balance_after: 9 })),
        "{settled:?} after {took:?}"
    );
    // The blocking pool: its first call may meet a dead connection
    // (answered unavailable), the next one connects afresh.
    let first = store.ledger_count(None);
    assert!(
        matches!(first, Ok(1) | Err(StoreError::Unavailable(_))),
        "{first:?}"
    );
    assert_eq!(store.ledger_count(None).unwrap(), 1);
    runtime.shutdown_background();
}

/// SQLite: a settled charge queues for the store's writer thread and is
/// awaited there, so it completes while the runtime's only blocking thread
/// is taken.
#[test]
fn a_sqlite_charge_is_settled_without_a_blocking_thread() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store.add_credits("acme", 10, 0).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (busy_tx, busy) = std::sync::mpsc::channel();
    // Blocks on purpose: takes the runtime's only blocking thread.
    runtime.spawn_blocking(move || {
        busy_tx.send(()).unwrap();
        let _ = held.recv();
    });
    busy.recv_timeout(Duration::from_secs(10))
        .expect("the blocking thread is taken");
    let bill = Bill::new("acme", "k1", "tiktok", 3, "req_1");
    let charged = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), charge_settled(&store, bill, 10)).await
    });
    release.send(()).unwrap();
    assert!(
        matches!(charged, Ok(Ok(Charge::Charged { balance_after: 7 }))),
        "{charged:?}"
    );
}
