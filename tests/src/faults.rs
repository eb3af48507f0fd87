//! A misbehaving upstream on loopback for the robustness suite. It honours
//! the same override contract as [`crate::fake_upstream`] (the path starts
//! with the platform host), but speaks raw HTTP/1.1 over TCP so it can fail
//! the way real servers fail: answer too late, reset the connection, stop
//! mid-body, send garbage or too much, or redirect forever. One request per
//! connection (`connection: close`), so every fault hits a fresh socket.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How to answer a request whose logical URL contains a rule's needle.
#[derive(Clone, Debug)]
pub enum Fault {
    /// Wait this long before answering (past the host's timeout).
    Slow(Duration),
    /// Hold the request until the gate opens (the test's sender sends
    /// `true`), then answer as [`Fault::Slow`] does: requests in flight for as
    /// long as the test needs, whatever the load.
    Held(tokio::sync::watch::Receiver<bool>),
    /// Close the connection with a TCP reset before any byte is sent.
    Reset,
    /// Answer this status with a short text body.
    Status(u16),
    /// Announce a long body, send a little of it, close.
    Truncated,
    /// `200 text/html` whose body is bytes that are neither HTML nor JSON.
    Garbage,
    /// A chunked body (no length announced) of this many bytes.
    Oversize(usize),
    /// `302` back to the same URL, forever.
    RedirectLoop,
    /// `302` to this absolute URL.
    RedirectTo(String),
}

/// A running faulty upstream; stops when dropped.
pub struct FaultyUpstream {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultyUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultyUpstream {
    /// Serve `rules` (needle in the logical URL → fault); anything else is a 404.
    pub async fn start(rules: Vec<(String, Fault)>) -> anyhow::Result<FaultyUpstream> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let rules = Arc::new(rules);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let (rules, seen) = (rules.clone(), seen.clone());
                    tokio::spawn(async move {
                        let _ = serve(socket, addr, &rules, &seen).await;
                    });
                }
            }
        });
        Ok(FaultyUpstream { addr, seen, task })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Logical URLs requested so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

async fn serve(
    mut socket: TcpStream,
    addr: SocketAddr,
    rules: &[(String, Fault)],
    seen: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    // Read the request body too (POSTs): closing a socket with unread data
    // makes the kernel send a reset, which would hide the fault under test.
    let head_end = head
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .unwrap_or(head.len());
    let text = String::from_utf8_lossy(&head[..head_end]).into_owned();
    let length: usize = text
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body_read = head.len() - head_end;
    while body_read < length {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body_read += n;
    }
    let path = text
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_string();
    let logical = format!("https:/{path}");
    if let Ok(mut s) = seen.lock() {
        s.push(logical.clone());
    }
    let fault = rules
        .iter()
        .find(|(needle, _)| logical.contains(needle.as_str()))
        .map(|(_, f)| f.clone());
    let Some(fault) = fault else {
        return respond(&mut socket, 404, &[], b"no fault route").await;
    };
    match fault {
        Fault::Slow(d) => {
            tokio::time::sleep(d).await;
            respond(
                &mut socket,
                200,
                &[("content-type", "text/html")],
                b"<html>late</html>",
            )
            .await
        }
        Fault::Held(mut gate) => {
            // A closed gate (its sender dropped) opens it too.
            let _ = gate.wait_for(|open| *open).await;
            respond(
                &mut socket,
                200,
                &[("content-type", "text/html")],
                b"<html>late</html>",
            )
            .await
        }
        Fault::Reset => {
            socket.set_zero_linger()?;
            drop(socket);
            Ok(())
        }
        Fault::Status(code) => respond(&mut socket, code, &[], b"upstream trouble").await,
        Fault::Truncated => {
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 100000\r\nconnection: close\r\n\r\n<html><head><script id=\"__UNIVERSAL_DATA_FOR_REHYDRATION__\">{\"__DEFAULT_SCOPE__\":{")
                .await?;
            socket.flush().await?;
            socket.shutdown().await
        }
        Fault::Garbage => {
            let body: Vec<u8> = (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            respond(
                &mut socket,
                200,
                &[("content-type", "text/html; charset=utf-8")],
                &body,
            )
            .await
        }
        Fault::Oversize(total) => {
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
                .await?;
            let chunk = vec![b'a'; 64 * 1024];
            let mut sent = 0;
            while sent < total {
                // The host may hang up as soon as it has seen enough: stop quietly then.
                if socket
                    .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                    .await
                    .is_err()
                    || socket.write_all(&chunk).await.is_err()
                    || socket.write_all(b"\r\n").await.is_err()
                {
                    return Ok(());
                }
                sent += chunk.len();
            }
            socket.write_all(b"0\r\n\r\n").await
        }
        Fault::RedirectLoop => {
            let again = format!("http://{addr}{path}");
            respond(&mut socket, 302, &[("location", again.as_str())], b"").await
        }
        Fault::RedirectTo(to) => respond(&mut socket, 302, &[("location", to.as_str())], b"").await,
    }
}

async fn respond(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    socket.write_all(out.as_bytes()).await?;
    socket.write_all(body).await?;
    socket.flush().await?;
    socket.shutdown().await
}
