"""The asynchronous client (asyncio), the same methods as coroutines."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, Iterable, AsyncIterator, Optional

import httpx

from . import _core
from ._core import Call, ItemLike, RetryPolicy
from .models import Batch, Job, JobEvent, Parsed


class AsyncClient:
    """A mediaparse API client over one ``httpx.AsyncClient``.

    ``http`` may be a client of your own (proxies, event hooks, transports);
    the bearer token is sent on every request either way.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy = RetryPolicy(),
        http: Optional[httpx.AsyncClient] = None,
        sleep=asyncio.sleep,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._auth = {"Authorization": f"Bearer {token}"}
        self._http = http or httpx.AsyncClient(timeout=timeout)
        self._owns_http = http is None
        self.retry = retry
        self._sleep = sleep

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _send(self, call: Call, timeout: Optional[float] = None) -> httpx.Response:
        attempt = 0
        while True:
            headers = {**self._auth, **(call.headers or {})}
            try:
                response = await self._http.request(
                    call.method,
                    self._base + call.path,
                    json=call.json,
                    params=call.params,
                    headers=headers,
                    **({"timeout": timeout} if timeout is not None else {}),
                )
            except httpx.TransportError:
                delay = self.retry.delay(attempt, None)
                if delay is None:
                    raise
            else:
                delay = self.retry.delay(attempt, response)
                if delay is None:
                    return response
            await self._sleep(delay)
            attempt += 1

    # Parses

    async def parse(
        self,
        url: str,
        *,
        platform: Optional[str] = None,
        delivery: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Parsed:
        """Parse one post; with ``platform`` the platform endpoint's shape."""
        call = _core.post_call(
            _core.parse_path(platform), {"url": url}, idempotency_key, _core.parse_params(delivery)
        )
        return _core.parsed(await self._send(call), platform is not None)

    async def batch(self, items: Iterable[ItemLike], *, idempotency_key: Optional[str] = None) -> Batch:
        """Parse up to 50 posts in one request; each item answers on its own."""
        call = _core.post_call("/api/v1/batch", _core.items_body(items), idempotency_key)
        return _core.batch(await self._send(call))

    # Jobs

    async def create_job(
        self,
        items: Iterable[ItemLike],
        *,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Job:
        body: Dict[str, Any] = _core.items_body(items)
        if callback_url:
            body["callback_url"] = callback_url
        return _core.job(await self._send(_core.post_call("/api/v1/jobs", body, idempotency_key)))

    async def get_job(self, job_id: str, *, wait: Optional[int] = None) -> Job:
        params = {"wait": min(int(wait), _core.MAX_JOB_WAIT_SECONDS)} if wait else None
        timeout = (params["wait"] + 30.0) if params else None
        return _core.job(await self._send(Call("GET", f"/api/v1/jobs/{job_id}", params=params), timeout))

    async def wait_job(self, job_id: str, *, timeout: float = 300.0) -> Job:
        """Hold ``?wait=`` requests until the job is done or ``timeout`` passes
        (then the last state is returned, not done)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            job = await self.get_job(job_id, wait=max(1, min(int(left), _core.MAX_JOB_WAIT_SECONDS)))
            if job.done or time.monotonic() >= deadline:
                return job

    async def job_events(self, job_id: str) -> AsyncIterator[JobEvent]:
        """The job's server-sent events (``item``…, then ``done``)."""
        parser = _core.SseParser()
        async with self._http.stream(
            "GET",
            f"{self._base}/api/v1/jobs/{job_id}/events",
            headers={**self._auth, "Accept": "text/event-stream"},
            timeout=httpx.Timeout(10.0, read=None),
        ) as response:
            if response.status_code >= 400:
                await response.aread()
                raise _core.error_from(response)
            async for line in response.aiter_lines():
                event = parser.feed(line)
                if event is not None:
                    yield event
                    if event.event == "done":
                        return

    # Free views

    async def capabilities(self) -> Dict[str, Any]:
        return _core.envelope(await self._send(Call("GET", "/api/v1/capabilities")))["data"]

    async def account(self) -> Dict[str, Any]:
        return _core.envelope(await self._send(Call("GET", "/api/v1/account")))["data"]
