"""Typed answers of the mediaparse API (plain dataclasses, no extra dependency).

Each model keeps the JSON it was read from in ``raw``, so members a newer
service adds are not lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class Image:
    url: str
    width: int
    height: int

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Image":
        return cls(url=d["url"], width=int(d.get("width", 0)), height=int(d.get("height", 0)))


@dataclass(frozen=True)
class Video:
    url: str
    quality: str
    mime_type: str
    width: int
    height: int
    has_audio: bool
    source: str
    headers: Dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Video":
        return cls(
            url=d["url"],
            quality=d.get("quality", ""),
            mime_type=d.get("mimeType", ""),
            width=int(d.get("width", 0)),
            height=int(d.get("height", 0)),
            has_audio=bool(d.get("hasAudio", True)),
            source=d.get("source", "direct"),
            headers=dict(d.get("headers") or {}),
        )


@dataclass(frozen=True)
class Audio:
    url: str
    quality: str
    mime_type: str
    bitrate: int
    source: str
    headers: Dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Audio":
        return cls(
            url=d["url"],
            quality=d.get("quality", ""),
            mime_type=d.get("mimeType", ""),
            bitrate=int(d.get("bitrate", 0)),
            source=d.get("source", "direct"),
            headers=dict(d.get("headers") or {}),
        )


@dataclass(frozen=True)
class Media:
    """The normalized media object of one post."""

    platform: str
    title: str
    thumbnail: str
    duration: float
    images: List[Image]
    videos: List[Video]
    audios: List[Audio]
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Media":
        return cls(
            platform=d["platform"],
            title=d.get("title", ""),
            thumbnail=d.get("thumbnail", ""),
            duration=float(d.get("duration", 0)),
            images=[Image.from_json(i) for i in d.get("images", [])],
            videos=[Video.from_json(v) for v in d.get("videos", [])],
            audios=[Audio.from_json(a) for a in d.get("audios", [])],
            raw=d,
        )


@dataclass(frozen=True)
class PlatformResult:
    """The platform endpoint's answer: the media and the platform's own data."""

    media: Media
    platform_data: Dict[str, Any]
    platform_data_version: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "PlatformResult":
        return cls(
            media=Media.from_json(d["media"]),
            platform_data=dict(d.get("platformData") or {}),
            platform_data_version=str(d.get("platformDataVersion", "")),
        )


@dataclass(frozen=True)
class Parsed:
    """One parse's answer: ``media`` (and ``platform`` data when asked), or
    ``None`` for a link without media (code ``"304"``, not charged)."""

    media: Optional[Media]
    platform: Optional[PlatformResult]
    code: Optional[str]
    credits_charged: int
    request_id: Optional[str]
    replayed: bool


@dataclass(frozen=True)
class BatchItem:
    """One item of a batch or job: a result, or the error envelope of that item."""

    status: int
    data: Any
    msg: str
    code: Optional[str]

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.data is not None

    @property
    def media(self) -> Optional[Media]:
        if not self.ok:
            return None
        if isinstance(self.data, dict) and "media" in self.data:
            return Media.from_json(self.data["media"])
        return Media.from_json(self.data)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "BatchItem":
        return cls(
            status=int(d.get("status", 0)),
            data=d.get("data"),
            msg=d.get("msg", ""),
            code=d.get("code"),
        )


@dataclass(frozen=True)
class Batch:
    items: List[BatchItem]
    credits_charged: int
    request_id: Optional[str]


@dataclass(frozen=True)
class Job:
    id: str
    state: str
    items: Optional[List[BatchItem]]
    location: Optional[str] = None
    raw: Dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def done(self) -> bool:
        return self.state == "done"

    @classmethod
    def from_json(cls, d: Dict[str, Any], location: Optional[str] = None) -> "Job":
        items = d.get("items")
        return cls(
            id=d["id"],
            state=d.get("state", ""),
            items=[BatchItem.from_json(i) for i in items] if items is not None else None,
            location=location,
            raw=d,
        )


@dataclass(frozen=True)
class JobEvent:
    """One server-sent event of a job: ``item`` (one item finished) or ``done``."""

    event: str
    data: Any
    id: Optional[str] = None
