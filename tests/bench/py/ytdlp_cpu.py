"""CPU per parse of yt-dlp's TikTok extractor on a saved page, no network.

Usage: ytdlp_cpu.py PAGE_FILE URL MIN_RUNS BUDGET_S
Prints one JSON line: {"version", "runs", "cpu_us_median", "formats"}.

The page download is replaced by the saved page (the same bytes the bench's
fake upstream serves), so what is timed is yt-dlp's extraction only:
finding the rehydration JSON in the HTML, parsing it, building the formats.
"""

import json
import sys
import time

from yt_dlp import YoutubeDL
from yt_dlp.extractor.tiktok import TikTokIE
from yt_dlp.version import __version__


class SavedHandle:
    """What `_download_webpage_handle` returns besides the text."""

    def __init__(self, url):
        self.url = url
        self.extensions = {}


def main():
    page_file, url, min_runs, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    with open(page_file, encoding="utf-8") as f:
        page = f.read()
    ydl = YoutubeDL({"quiet": True, "no_warnings": True, "noprogress": True})
    ie = TikTokIE(ydl)
    ie._download_webpage_handle = lambda page_url, *a, **k: (page, SavedHandle(page_url))
    info = ie._real_extract(url)
    formats = len(info.get("formats") or [])
    if formats == 0:
        raise SystemExit("yt-dlp found no formats in the saved page")
    for _ in range(3):
        ie._real_extract(url)
    samples = []
    started = time.monotonic()
    while len(samples) < min_runs or (time.monotonic() - started < budget and len(samples) < 10000):
        t = time.process_time_ns()
        ie._real_extract(url)
        samples.append(time.process_time_ns() - t)
    samples.sort()
    print(json.dumps({
        "version": __version__,
        "runs": len(samples),
        "cpu_us_median": samples[len(samples) // 2] / 1000,
        "formats": formats,
    }))


if __name__ == "__main__":
    main()
