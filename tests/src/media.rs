//! Real media for the tunnel tests, made by `ffmpeg` once per test process:
//! a short H.264 video-only MP4, an AAC audio-only M4A and a JPEG. ffmpeg
//! is a Debian package `cargo xtask test` installs; without it these tests
//! fail with the command to run (never a silent skip).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Seconds of the generated video and audio.
pub const DURATION_S: f64 = 2.0;

/// The generated files (kept until the test process ends).
pub struct Media {
    _dir: tempfile::TempDir,
    pub video_mp4: PathBuf,
    pub audio_m4a: PathBuf,
    pub image_jpg: PathBuf,
}

fn ffmpeg(args: &[&str], out: &Path) {
    let status = Command::new("ffmpeg")
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .arg(out)
        .status()
        .unwrap_or_else(|e| {
            panic!("ffmpeg is needed ({e}); run `cargo xtask test` or: apt-get install ffmpeg")
        });
    assert!(status.success(), "ffmpeg {args:?} failed");
}

/// The media, made on first use.
pub fn media() -> &'static Media {
    static MEDIA: OnceLock<Media> = OnceLock::new();
    MEDIA.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = DURATION_S.to_string();
        let video_mp4 = dir.path().join("video.mp4");
        ffmpeg(
            &[
                "-f",
                "lavfi",
                "-i",
                &format!("testsrc=duration={d}:size=320x240:rate=25"),
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv420p",
                "-an",
            ],
            &video_mp4,
        );
        let audio_m4a = dir.path().join("audio.m4a");
        ffmpeg(
            &[
                "-f",
                "lavfi",
                "-i",
                &format!("sine=frequency=440:duration={d}"),
                "-c:a",
                "aac",
                "-vn",
            ],
            &audio_m4a,
        );
        let image_jpg = dir.path().join("image.jpg");
        ffmpeg(
            &["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1"],
            &image_jpg,
        );
        Media {
            _dir: dir,
            video_mp4,
            audio_m4a,
            image_jpg,
        }
    })
}

/// `ffprobe`'s streams and duration of `file`: (codec types, seconds).
pub fn probe(file: &Path) -> (Vec<String>, f64) {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=codec_type:format=duration",
            "-of",
            "json",
        ])
        .arg(file)
        .output()
        .expect("ffprobe (Debian package ffmpeg)");
    assert!(out.status.success(), "ffprobe {}", file.display());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("ffprobe json");
    let types = v["streams"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["codec_type"].as_str().map(String::from))
        .collect();
    let duration = v["format"]["duration"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0.0);
    (types, duration)
}
