//! A real PostgreSQL server for the tests: Debian's `postgresql` binaries,
//! `initdb` into a temporary directory as an unprivileged user (PostgreSQL
//! refuses to run as root), listening on a free loopback port. One server per
//! test binary run, a fresh database per test.
//!
//! The server is started by a small shell that reads commands from a pipe
//! from this process (`stop`, `start`: the cluster test stops the database
//! mid-load): when the test binary exits (however it exits) the pipe closes,
//! and the shell stops the server and removes its directory.
//!
//! Public (hidden) so the end-to-end suite uses the same server; it runs
//! nothing unless a test calls it.
//!
//! A missing PostgreSQL is a failure, never a skip (`cargo xtask test`
//! installs the Debian package).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The uid/gid the server runs as when the tests run as root (`nobody`).
const UNPRIVILEGED: u32 = 65534;

struct Server {
    port: u16,
    dir: PathBuf,
    keeper: Mutex<Keeper>,
}

/// The shell holding the server: commands go in on its stdin (whose closing
/// stops the server), one line per command done comes out.
struct Keeper {
    _child: Child,
    input: ChildStdin,
    output: std::io::Lines<std::io::BufReader<ChildStdout>>,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

/// The newest `/usr/lib/postgresql/<major>/bin` (15 or later), or `MEDIAPARSE_PG_BIN`.
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("MEDIAPARSE_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut majors: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .filter(|m: &u32| *m >= 15)
                .collect()
        })
        .unwrap_or_default();
    majors.sort();
    majors
        .last()
        .map(|m| PathBuf::from(format!("/usr/lib/postgresql/{m}/bin")))
        .filter(|d| d.join("initdb").is_file())
        .ok_or_else(|| {
            "PostgreSQL 15+ server binaries not found under /usr/lib/postgresql: \
             run `cargo xtask test` (it installs Debian's postgresql) or \
             `apt-get install postgresql`"
                .to_string()
        })
}

fn is_root() -> bool {
    // /proc/self belongs to the process's effective uid.
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

/// `program args…` as the unprivileged user when we are root.
fn as_user(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            format!("--reuid={UNPRIVILEGED}"),
            format!("--regid={UNPRIVILEGED}"),
            "--clear-groups".into(),
            "--".into(),
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54329)
}

fn start() -> Result<Server, String> {
    let bin = bin_dir()?;
    let dir = std::env::temp_dir().join(format!("mediaparse-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if is_root() {
        std::os::unix::fs::chown(&dir, Some(UNPRIVILEGED), Some(UNPRIVILEGED))
            .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    }
    let data = dir.join("data");
    let out = as_user(&bin.join("initdb"))
        .args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
            "-D",
        ])
        .arg(&data)
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let port = free_port();
    let postgres = as_user(&bin.join("postgres"));
    let postgres_cmd = std::iter::once(postgres.get_program())
        .chain(postgres.get_args())
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ");
    // fsync off: a test server's data is thrown away anyway.
    let script = format!(
        "run() {{ {postgres_cmd} -D {data} -p {port} -k {dir} -c listen_addresses=127.0.0.1 \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
         -c max_connections=400 >>{dir}/log 2>&1 & pid=$!; }}; run; echo started; \
         while read cmd; do case $cmd in stop) kill -INT $pid; wait $pid; echo stopped;; \
         start) run; echo started;; esac; done; \
         kill -INT $pid; wait $pid; rm -rf {dir}",
        data = shell_quote(&data.to_string_lossy()),
        dir = shell_quote(&dir.to_string_lossy()),
    );
    let mut keeper = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting postgres: {e}"))?;
    let (Some(input), Some(output)) = (keeper.stdin.take(), keeper.stdout.take()) else {
        return Err("no pipe to the postgres keeper".into());
    };
    let mut output = std::io::BufReader::new(output).lines();
    let _ = output.next();
    wait_ready(port, &dir)?;
    Ok(Server {
        port,
        dir,
        keeper: Mutex::new(Keeper {
            _child: keeper,
            input,
            output,
        }),
    })
}

fn wait_ready(port: u16, dir: &Path) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match postgres::Client::connect(&admin_url(port), postgres::NoTls) {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
                return Err(format!("postgres did not start: {e}\n{log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

fn server() -> &'static Server {
    match SERVER.get_or_init(start) {
        Ok(s) => s,
        Err(e) => panic!("test PostgreSQL: {e}"),
    }
}

fn command(cmd: &str) {
    let server = server();
    let mut keeper = server.keeper.lock().unwrap_or_else(|p| p.into_inner());
    writeln!(keeper.input, "{cmd}").expect("write to the postgres keeper");
    keeper.input.flush().expect("flush the postgres keeper");
    let _ = keeper.output.next();
}

/// Stop the shared test server (fast shutdown: sessions are ended). Only a
/// test that owns the whole binary's PostgreSQL use may call this.
pub fn stop_server() {
    command("stop");
}

/// Start the shared test server again and wait until it answers.
pub fn start_server() {
    command("start");
    let server = server();
    wait_ready(server.port, &server.dir).expect("postgres restarts");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn admin_url(port: u16) -> String {
    format!("postgres://postgres@127.0.0.1:{port}/postgres")
}

/// The URL of a new, empty database on the shared test server.
pub fn fresh_database() -> String {
    let server = server();
    let name = format!("t{}", NEXT_DB.fetch_add(1, Ordering::Relaxed));
    let mut admin = postgres::Client::connect(&admin_url(server.port), postgres::NoTls)
        .expect("connect to the test PostgreSQL");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    format!("postgres://postgres@127.0.0.1:{}/{name}", server.port)
}

/// Turn TLS on in the shared test server with this certificate and key
/// (PEM), keeping plain connections working; once per test binary run.
pub fn enable_tls(cert_pem: &str, key_pem: &str) {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let server = server();
        let (cert, key) = (server.dir.join("server.crt"), server.dir.join("server.key"));
        std::fs::write(&cert, cert_pem).expect("write the test server certificate");
        std::fs::write(&key, key_pem).expect("write the test server key");
        // PostgreSQL refuses a key others can read.
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("chmod the test server key");
        if is_root() {
            for f in [&cert, &key] {
                std::os::unix::fs::chown(f, Some(UNPRIVILEGED), Some(UNPRIVILEGED))
                    .expect("chown the test server's TLS files");
            }
        }
        let mut admin = postgres::Client::connect(&admin_url(server.port), postgres::NoTls)
            .expect("connect to the test PostgreSQL");
        // One statement per call: ALTER SYSTEM refuses a multi-statement batch.
        for statement in [
            format!(
                "ALTER SYSTEM SET ssl_cert_file = {}",
                sql_quote(&cert.to_string_lossy())
            ),
            format!(
                "ALTER SYSTEM SET ssl_key_file = {}",
                sql_quote(&key.to_string_lossy())
            ),
            "ALTER SYSTEM SET ssl = on".to_string(),
            "SELECT pg_reload_conf()".to_string(),
        ] {
            admin.batch_execute(&statement).expect("turn TLS on");
        }
        // The reload is asynchronous: wait until new sessions see it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut c = postgres::Client::connect(&admin_url(server.port), postgres::NoTls)
                .expect("connect to the test PostgreSQL");
            let on: String = c.query_one("SHOW ssl", &[]).expect("SHOW ssl").get(0);
            if on == "on" {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "TLS did not come on: see {}/log",
                server.dir.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    });
}

fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// Hold `n` connections of `store`'s pool at once, then give them back idle.
pub fn fill_pool(store: &crate::Store, n: usize) {
    let crate::Backend::Postgres(pg) = &store.backend else {
        unreachable!("a PostgreSQL store")
    };
    let barrier = std::sync::Barrier::new(n);
    std::thread::scope(|scope| {
        let held: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| {
                    // Every connection is held until all were lent.
                    let client = pg.client();
                    barrier.wait();
                    client.map(drop)
                })
            })
            .collect();
        for h in held {
            h.join()
                .unwrap()
                .expect("a connection for every admitted parse");
        }
    });
}

/// Hold `n` connections of `store`'s async pool at once, then give them
/// back idle. Call it on the runtime that will use them: a connection runs
/// as a task of the runtime that opened it.
pub async fn fill_async_pool(store: &crate::Store, n: usize) {
    let crate::Backend::Postgres(pg) = &store.backend else {
        unreachable!("a PostgreSQL store")
    };
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let client = pg
            .async_client()
            .await
            .expect("a connection for every admitted parse");
        held.push(client);
    }
}
