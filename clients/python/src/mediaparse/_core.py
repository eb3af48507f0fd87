"""What the sync and async clients share: building requests, the retry
policy, reading envelopes into models. No I/O here."""

from __future__ import annotations

import email.utils
import time
import uuid
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

import httpx

from .errors import MediaparseError
from .models import Batch, BatchItem, Job, JobEvent, Media, Parsed, PlatformResult

#: Answers worth another attempt after their ``Retry-After``.
RETRY_STATUSES = frozenset({429, 503})

#: The longest ``?wait=`` the service accepts on a job.
MAX_JOB_WAIT_SECONDS = 30

ItemLike = Union[str, Mapping[str, Any]]


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` further attempts after the first; never sleeps longer
    than ``max_wait`` seconds at once (a longer ``Retry-After`` raises at
    once); without ``Retry-After`` waits ``backoff * 2**attempt``."""

    max_retries: int = 3
    max_wait: float = 60.0
    backoff: float = 0.5

    def delay(self, attempt: int, response: Optional[httpx.Response]) -> Optional[float]:
        """Seconds to wait before attempt ``attempt + 1``, or ``None``: give up."""
        if attempt >= self.max_retries:
            return None
        if response is not None:
            if response.status_code not in RETRY_STATUSES:
                return None
            after = retry_after(response)
            if after is not None:
                return after if after <= self.max_wait else None
        return min(self.backoff * (2**attempt), self.max_wait)


def retry_after(response: httpx.Response) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date (RFC 9110)."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class Call:
    """One logical call: every attempt sends this, Idempotency-Key included."""

    method: str
    path: str
    json: Any = None
    params: Optional[Dict[str, Any]] = None
    headers: Optional[Dict[str, str]] = None


def post_call(path: str, body: Any, idempotency_key: Optional[str], params=None) -> Call:
    """A POST carrying one Idempotency-Key across its retries (a fresh UUID
    unless the caller names one)."""
    return Call(
        "POST",
        path,
        json=body,
        params=params,
        headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())},
    )


def item(value: ItemLike) -> Dict[str, Any]:
    if isinstance(value, str):
        return {"url": value}
    out = dict(value)
    if "url" not in out and "link" not in out:
        raise ValueError("a batch item needs a url")
    return out


def items_body(items: Iterable[ItemLike]) -> Dict[str, Any]:
    return {"items": [item(i) for i in items]}


def error_from(response: httpx.Response) -> MediaparseError:
    try:
        body = response.json()
    except ValueError:
        body = None
    code = body.get("code") if isinstance(body, dict) else None
    msg = body.get("msg") if isinstance(body, dict) else None
    return MediaparseError(
        status=response.status_code,
        code=code,
        msg=msg or response.reason_phrase,
        request_id=response.headers.get("x-request-id"),
        retry_after=retry_after(response),
        body=body,
    )


def envelope(response: httpx.Response) -> Dict[str, Any]:
    """The success envelope, or the error raised."""
    if response.status_code >= 400:
        raise error_from(response)
    body = response.json()
    if not isinstance(body, dict):
        raise MediaparseError(response.status_code, None, "not a JSON object", body=body)
    return body


def credits(response: httpx.Response) -> int:
    try:
        return int(response.headers.get("x-credits-charged", "0"))
    except ValueError:
        return 0


def parsed(response: httpx.Response, platform: bool) -> Parsed:
    body = envelope(response)
    data = body.get("data")
    media = plat = None
    if data is not None:
        if platform:
            plat = PlatformResult.from_json(data)
            media = plat.media
        else:
            media = Media.from_json(data)
    return Parsed(
        media=media,
        platform=plat,
        code=body.get("code"),
        credits_charged=credits(response),
        request_id=response.headers.get("x-request-id"),
        replayed=response.headers.get("idempotent-replayed") == "true",
    )


def batch(response: httpx.Response) -> Batch:
    data = envelope(response).get("data") or {}
    return Batch(
        items=[BatchItem.from_json(i) for i in data.get("items", [])],
        credits_charged=credits(response),
        request_id=response.headers.get("x-request-id"),
    )


def job(response: httpx.Response) -> Job:
    data = envelope(response).get("data") or {}
    return Job.from_json(data, location=response.headers.get("location"))


def parse_path(platform: Optional[str]) -> str:
    return f"/api/v1/platforms/{platform}/parse" if platform else "/api/v1/parse"


def parse_params(delivery: Optional[str]) -> Optional[Dict[str, Any]]:
    return {"delivery": delivery} if delivery else None


class SseParser:
    """Server-sent events, fed line by line (the WHATWG event-stream format)."""

    def __init__(self) -> None:
        self._event = ""
        self._data: List[str] = []
        self._id: Optional[str] = None

    def feed(self, line: str) -> Optional[JobEvent]:
        line = line.rstrip("\r\n")
        if line == "":
            if not self._data and not self._event:
                return None
            text = "\n".join(self._data)
            event = JobEvent(event=self._event or "message", data=_json_or_text(text), id=self._id)
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            self._id = value
        return None


def _json_or_text(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text
