"""Retries against the service's real rate limit: a key allowed 20 parses a
minute refills one every 3 s, so an exhausted key answers 429 with a
Retry-After of a few seconds."""

import time

import httpx
import pytest

from mediaparse import AsyncClient, Client, MediaparseError, RetryPolicy
from conftest import exhaust


class Recorder:
    """Every request and response of the call, through httpx's own hooks."""

    def __init__(self):
        self.requests = []
        self.responses = []

    def hooks(self):
        return {"request": [self.requests.append], "response": [self.responses.append]}

    async def ahooks_request(self, request):
        self.requests.append(request)

    async def ahooks_response(self, response):
        self.responses.append(response)


def _check_one_call(rec, slept, post_url):
    statuses = [r.status_code for r in rec.responses]
    assert statuses[0] == 429 and statuses[-1] == 200, statuses
    assert set(statuses[:-1]) == {429}, statuses
    keys = {r.headers["idempotency-key"] for r in rec.requests}
    assert len(keys) == 1, f"one Idempotency-Key across the attempts: {keys}"
    # Each wait is the 429's own Retry-After.
    assert slept == [float(r.headers["retry-after"]) for r in rec.responses[:-1]]
    return keys.pop()


def test_a_429_is_retried_after_retry_after_with_one_idempotency_key(
    base_url, limited_token, post_url
):
    rec = Recorder()
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        time.sleep(seconds)

    with httpx.Client(event_hooks=rec.hooks()) as http:
        mp = Client(base_url, limited_token, http=http, sleep=sleep, retry=RetryPolicy(max_retries=5))
        exhaust(base_url, limited_token)
        result = mp.parse(post_url)
    assert result.media is not None and result.credits_charged == 1
    key = _check_one_call(rec, slept, post_url)
    # The service stored the call under that key: asking again replays it.
    with Client(base_url, limited_token, retry=RetryPolicy(max_retries=5)) as again:
        replay = again.parse(post_url, idempotency_key=key)
    assert replay.replayed and replay.media == result.media


def test_a_retry_after_beyond_max_wait_raises_at_once(base_url, limited_token, post_url):
    rec = Recorder()
    slept = []
    with httpx.Client(event_hooks=rec.hooks()) as http:
        mp = Client(
            base_url,
            limited_token,
            http=http,
            sleep=slept.append,
            retry=RetryPolicy(max_retries=3, max_wait=0.5),
        )
        exhaust(base_url, limited_token)
        with pytest.raises(MediaparseError) as e:
            mp.parse(post_url)
    assert (e.value.status, e.value.code) == (429, "rate_limited")
    assert e.value.retry_after is not None and e.value.retry_after >= 1
    assert len(rec.requests) == 1 and slept == []


async def test_the_async_client_retries_a_429_the_same_way(base_url, limited_token, post_url):
    import asyncio

    rec = Recorder()
    slept = []

    async def sleep(seconds):
        slept.append(seconds)
        await asyncio.sleep(seconds)

    hooks = {"request": [rec.ahooks_request], "response": [rec.ahooks_response]}
    async with httpx.AsyncClient(event_hooks=hooks) as http:
        mp = AsyncClient(base_url, limited_token, http=http, sleep=sleep, retry=RetryPolicy(max_retries=5))
        exhaust(base_url, limited_token)
        result = await mp.parse(post_url)
    assert result.media is not None
    _check_one_call(rec, slept, post_url)
