//! Real proxy servers on loopback, each with its own configuration and log
//! in a temporary folder; killed when dropped. Which requests went through a
//! proxy is read from its log.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Proxy {
    pub port: u16,
    log: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn binary(name: &str, package: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"] {
        let path = Path::new(dir).join(name);
        if path.is_file() {
            return path;
        }
    }
    panic!("{name} is missing: `cargo xtask test` installs it (apt-get install -y {package})");
}

impl Proxy {
    /// `tinyproxy`: a forwarding HTTP proxy (and CONNECT), loopback only.
    pub fn tinyproxy() -> Proxy {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let log = dir.path().join("tinyproxy.log");
        let conf = dir.path().join("tinyproxy.conf");
        std::fs::write(
            &conf,
            format!(
                "Port {port}\nListen 127.0.0.1\nTimeout 30\nAllow 127.0.0.1\nMaxClients 50\n\
                 LogFile \"{}\"\nLogLevel Info\n",
                log.display()
            ),
        )
        .expect("tinyproxy.conf");
        let child = Command::new(binary("tinyproxy", "tinyproxy"))
            .arg("-d")
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy starts");
        Proxy::listening(port, log, child, dir)
    }

    /// `danted`: a SOCKS5 server without authentication, loopback only.
    pub fn dante() -> Proxy {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let log = dir.path().join("danted.log");
        let conf = dir.path().join("danted.conf");
        std::fs::write(
            &conf,
            format!(
                "logoutput: {}\ninternal: 127.0.0.1 port = {port}\nexternal: 127.0.0.1\n\
                 socksmethod: none\nclientmethod: none\n\
                 client pass {{\n from: 127.0.0.0/8 to: 0.0.0.0/0\n log: error connect\n}}\n\
                 socks pass {{\n from: 127.0.0.0/8 to: 0.0.0.0/0\n command: connect\n log: error connect\n}}\n",
                log.display()
            ),
        )
        .expect("danted.conf");
        let child = Command::new(binary("danted", "dante-server"))
            .arg("-f")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("danted starts");
        Proxy::listening(port, log, child, dir)
    }

    fn listening(port: u16, log: PathBuf, mut child: Child, dir: tempfile::TempDir) -> Proxy {
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "the proxy exited ({status}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the proxy did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Proxy {
            port,
            log,
            child,
            _dir: dir,
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Log lines that name `needle` (a request line or a connection).
    pub fn count(&self, needle: &str) -> usize {
        self.log().lines().filter(|l| l.contains(needle)).count()
    }
}
