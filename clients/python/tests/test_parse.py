import uuid

import httpx
import pytest

from mediaparse import AsyncClient, Client, MediaparseError
from conftest import UNSUPPORTED


def test_parse_answers_a_typed_media_object_and_its_charge(base_url, token, post_url):
    with Client(base_url, token) as mp:
        result = mp.parse(post_url)
    assert result.media is not None
    assert result.media.platform == "tiktok"
    assert result.media.images, "a photo post has images"
    assert all(i.url.startswith("http") for i in result.media.images)
    assert result.credits_charged == 1
    assert result.request_id and result.request_id.startswith("req_")
    assert result.platform is None


def test_the_platform_endpoint_adds_platform_data(base_url, token, post_url):
    with Client(base_url, token) as mp:
        result = mp.parse(post_url, platform="tiktok")
    assert result.platform is not None
    assert result.platform.platform_data_version == "1"
    assert result.platform.platform_data, "tiktok's platformData"
    assert result.media == result.platform.media


def test_an_error_envelope_raises_with_its_status_and_code(base_url, token):
    with Client(base_url, token) as mp:
        with pytest.raises(MediaparseError) as e:
            mp.parse(UNSUPPORTED)
    assert (e.value.status, e.value.code) == (400, "302")
    assert e.value.request_id


def test_a_bad_token_is_401(base_url):
    with Client(base_url, "mp_not_a_key") as mp:
        with pytest.raises(MediaparseError) as e:
            mp.parse("https://www.tiktok.com/@someone/video/1")
    assert e.value.status == 401


def test_a_named_idempotency_key_replays_the_first_answer(base_url, token, post_url):
    key = f"py-{uuid.uuid4()}"
    with Client(base_url, token) as mp:
        first = mp.parse(post_url, idempotency_key=key)
        second = mp.parse(post_url, idempotency_key=key)
    assert not first.replayed
    assert second.replayed
    # A replay is a new request (its own X-Request-Id) answering the stored result.
    assert second.credits_charged == first.credits_charged
    assert second.media == first.media


def test_capabilities_and_account_are_read(base_url, token):
    with Client(base_url, token) as mp:
        caps = mp.capabilities()
        account = mp.account()
    assert "tiktok" in {p["id"] for p in caps["platforms"]}
    assert isinstance(account, dict) and account


async def test_the_async_client_parses_concurrently(base_url, token, post_url):
    import asyncio

    async with AsyncClient(base_url, token) as mp:
        results = await asyncio.gather(*(mp.parse(post_url) for _ in range(3)))
    assert all(r.media is not None and r.media.platform == "tiktok" for r in results)
    assert len({r.request_id for r in results}) == 3


def test_a_caller_supplied_httpx_client_is_used(base_url, token, post_url):
    seen = []
    with httpx.Client(event_hooks={"request": [seen.append]}) as http:
        with Client(base_url, token, http=http) as mp:
            mp.parse(post_url)
    assert len(seen) == 1
    assert seen[0].headers["authorization"] == f"Bearer {token}"
