//! `GET /api/v1/tunnel/merge`: one fragmented MP4 made by
//! `ffmpeg` (stream copy, no re-encoding) from a video-only and an
//! audio-only tunnel token, streamed as ffmpeg writes it.
//!
//! ffmpeg reads its two inputs from this service's own tunnel on loopback
//! (`http://127.0.0.1:PORT/api/v1/tunnel/{token}`), not from pipes: the
//! tunnel answers `Range`, so ffmpeg can seek, and an MP4 whose index
//! (`moov`) sits at its end demuxes (from a pipe it cannot). The inputs go
//! through every tunnel rule (media-host list, SSRF guard per hop, the
//! key's limits and byte counts) because they are ordinary tunnel requests.
//! ffmpeg itself may open nothing else: `-protocol_whitelist http,tcp` and
//! `-format_whitelist` limited to MP4/Matroska demuxers (no playlist
//! demuxer that would follow URLs inside the media), its inputs are the
//! loopback URLs only, and the tunnel never answers a redirect.
//!
//! Bounded: at most `max_merges` ffmpeg processes (CPU), each killed at its
//! time limit, and killed when the caller goes away (the child is
//! `kill_on_drop` and lives in the response body stream).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStdout, Command};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Demuxers ffmpeg may use on the inputs: MP4 family, Matroska/WebM.
pub const INPUT_FORMATS: &str = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm";

/// Bytes read from ffmpeg per chunk.
const CHUNK: usize = 64 * 1024;

/// How long ffmpeg may take to produce its first bytes before the caller
/// gets an error instead of a `200` (it reads both inputs' headers first).
const FIRST_BYTES: Duration = Duration::from_secs(60);

/// The merge's configuration.
#[derive(Clone, Debug)]
pub struct MergeSettings {
    /// The `ffmpeg` program; `None`: merging is unavailable (`501`).
    pub ffmpeg: Option<PathBuf>,
    /// How ffmpeg reaches this service's tunnel, e.g. `http://127.0.0.1:8080`.
    pub loopback_base: String,
    /// One permit per ffmpeg process allowed at once.
    pub slots: Arc<Semaphore>,
    /// Longest life of one merge.
    pub time_limit: Duration,
}

impl MergeSettings {
    pub fn new(
        ffmpeg: Option<PathBuf>,
        loopback_base: String,
        max_merges: usize,
        time_limit: Duration,
    ) -> MergeSettings {
        MergeSettings {
            ffmpeg,
            loopback_base,
            slots: Arc::new(Semaphore::new(max_merges.max(1))),
            time_limit,
        }
    }

    /// No ffmpeg: every merge is `501 merge_unavailable`.
    pub fn unavailable() -> MergeSettings {
        MergeSettings::new(None, String::new(), 1, Duration::from_secs(1))
    }
}

/// `configured` when it names a program (`off`: none), else `ffmpeg` on `PATH`.
pub fn find_ffmpeg(configured: Option<&Path>) -> Option<PathBuf> {
    match configured {
        Some(p) if p.as_os_str() == "off" => None,
        Some(p) => p.is_file().then(|| p.to_path_buf()),
        None => std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("ffmpeg"))
                .find(|p| p.is_file())
        }),
    }
}

/// Why a merge did not start.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no ffmpeg configured or on PATH")]
    Unavailable,
    #[error("every merge slot is busy")]
    Busy,
    #[error("starting ffmpeg: {0}")]
    Spawn(std::io::Error),
    #[error("ffmpeg produced nothing: {0}")]
    Failed(String),
    #[error("ffmpeg produced nothing in time")]
    Timeout,
}

/// The ffmpeg arguments for merging `video` and `audio` (URLs) into a
/// fragmented MP4 on stdout.
pub fn ffmpeg_args(video: &str, audio: &str) -> Vec<String> {
    let mut args: Vec<String> = ["-nostdin", "-hide_banner", "-loglevel", "error"]
        .map(String::from)
        .to_vec();
    for input in [video, audio] {
        args.extend(
            [
                "-protocol_whitelist",
                "http,tcp",
                "-format_whitelist",
                INPUT_FORMATS,
                "-i",
                input,
            ]
            .map(String::from),
        );
    }
    args.extend(
        [
            "-map",
            "0:v:0",
            "-map",
            "1:a:0",
            "-c",
            "copy",
            "-movflags",
            "frag_keyframe+empty_moov+default_base_moof",
            "-f",
            "mp4",
            "pipe:1",
        ]
        .map(String::from),
    );
    args
}

/// A running merge: ffmpeg, its stdout, the slot it holds, its deadline.
struct Running {
    child: Child,
    stdout: ChildStdout,
    deadline: Instant,
    stderr: tokio::task::JoinHandle<String>,
    _slot: OwnedSemaphorePermit,
    /// Set once the outcome was counted; otherwise dropping counts `cancelled`.
    finished: bool,
}

impl Running {
    fn finish(&mut self, outcome: &str) {
        self.finished = true;
        mediaparse_metrics::global().tunnel_merge(outcome);
    }

    /// The next chunk of ffmpeg's output; `Ok(None)` at its end.
    async fn next_chunk(&mut self) -> std::io::Result<Option<Bytes>> {
        let mut buf = vec![0; CHUNK];
        let read = tokio::time::timeout_at(self.deadline, self.stdout.read(&mut buf)).await;
        match read {
            Err(_) => {
                self.finish("timeout");
                let _ = self.child.start_kill();
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "merge time limit",
                ))
            }
            Ok(Err(e)) => {
                self.finish("failed");
                Err(e)
            }
            Ok(Ok(0)) => {
                let status = tokio::time::timeout_at(self.deadline, self.child.wait()).await;
                match status {
                    Ok(Ok(s)) if s.success() => {
                        self.finish("ok");
                        Ok(None)
                    }
                    _ => {
                        self.finish("failed");
                        let stderr = (&mut self.stderr).await.unwrap_or_default();
                        tracing::info!(%stderr, "tunnel merge: ffmpeg failed");
                        Err(std::io::Error::other("ffmpeg failed"))
                    }
                }
            }
            Ok(Ok(n)) => {
                buf.truncate(n);
                Ok(Some(Bytes::from(buf)))
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.finished {
            // The caller went away; `kill_on_drop` ends ffmpeg.
            mediaparse_metrics::global().tunnel_merge("cancelled");
        }
    }
}

/// Read at most `limit` bytes of `reader` (ffmpeg's stderr) as text.
async fn read_some(reader: impl AsyncRead + Unpin, limit: u64) -> String {
    let mut out = Vec::new();
    let _ = reader.take(limit).read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Start ffmpeg on the tunnel URLs of `video` and `audio` (tokens already
/// checked by the caller) and wait for its first bytes; the stream that
/// follows owns the process.
pub async fn start(
    settings: &MergeSettings,
    video: &str,
    audio: &str,
) -> Result<BoxStream<'static, Result<Bytes, std::io::Error>>, MergeError> {
    let ffmpeg = settings.ffmpeg.as_ref().ok_or(MergeError::Unavailable)?;
    let slot = settings.slots.clone().try_acquire_owned().map_err(|_| {
        mediaparse_metrics::global().tunnel_merge("busy");
        MergeError::Busy
    })?;
    let url = |token: &str| format!("{}/api/v1/tunnel/{token}", settings.loopback_base);
    let mut child = Command::new(ffmpeg)
        .args(ffmpeg_args(&url(video), &url(audio)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(MergeError::Spawn)?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(MergeError::Spawn(std::io::Error::other("no pipes")));
    };
    // Drained all along (a full stderr pipe would stall ffmpeg); kept short,
    // and without the tokens (ffmpeg names its input URLs; they reach the log).
    let tokens = [video.to_string(), audio.to_string()];
    let stderr = tokio::spawn(async move {
        let mut stderr = stderr;
        let mut text = read_some(&mut stderr, 4096).await;
        let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
        for token in tokens.iter().filter(|t| !t.is_empty()) {
            text = text.replace(token.as_str(), "{redacted}");
        }
        text
    });
    let mut running = Running {
        child,
        stdout,
        deadline: Instant::now() + settings.time_limit,
        stderr,
        _slot: slot,
        finished: false,
    };
    let first = tokio::time::timeout(FIRST_BYTES.min(settings.time_limit), running.next_chunk())
        .await
        .map_err(|_| MergeError::Timeout)?;
    let first = match first {
        Ok(Some(chunk)) => chunk,
        Ok(None) => return Err(MergeError::Failed("empty output".into())),
        Err(e) => return Err(MergeError::Failed(e.to_string())),
    };
    let rest = futures::stream::unfold(Some(running), |state| async move {
        let mut running = state?;
        match running.next_chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk), Some(running))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    });
    Ok(Box::pin(futures::StreamExt::chain(
        futures::stream::once(async move { Ok::<Bytes, std::io::Error>(first) }),
        rest,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ffmpeg_reads_only_the_two_inputs_over_http() {
        let args = ffmpeg_args(
            "http://127.0.0.1:1/api/v1/tunnel/v",
            "http://127.0.0.1:1/api/v1/tunnel/a",
        );
        let joined = args.join(" ");
        assert_eq!(
            joined
                .matches("-protocol_whitelist http,tcp -format_whitelist")
                .count(),
            2
        );
        assert!(joined.contains("-c copy"));
        assert!(joined.contains("frag_keyframe+empty_moov"));
        assert!(joined.ends_with("-f mp4 pipe:1"));
        assert_eq!(find_ffmpeg(Some(Path::new("off"))), None);
        assert_eq!(find_ffmpeg(Some(Path::new("/nonexistent/ffmpeg"))), None);
    }
}
