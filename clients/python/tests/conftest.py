"""The suite runs against a real mediaparse service in demo mode (every
fixture behind a fake upstream), started by the end-to-end runner
(`cargo xtask test`, `tests/tests/e2e/clients.rs`), which passes:

- MEDIAPARSE_BASE_URL   the service
- MEDIAPARSE_TOKEN      a key with credits and no rate limit
- MEDIAPARSE_LIMITED_TOKEN  a key allowed 20 parses a minute (retry tests)
- MEDIAPARSE_PARSE_URL  a TikTok photo post the fake upstream serves
"""

import os

import httpx
import pytest


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run through the end-to-end runner (cargo xtask test)")
    return value


@pytest.fixture(scope="session")
def base_url() -> str:
    return _env("MEDIAPARSE_BASE_URL")


@pytest.fixture(scope="session")
def token() -> str:
    return _env("MEDIAPARSE_TOKEN")


@pytest.fixture(scope="session")
def limited_token() -> str:
    return _env("MEDIAPARSE_LIMITED_TOKEN")


@pytest.fixture(scope="session")
def post_url() -> str:
    return _env("MEDIAPARSE_PARSE_URL")


UNSUPPORTED = "https://example.com/not-a-post"


def exhaust(base_url: str, token: str) -> httpx.Response:
    """Spend the key's parse quota with unsupported links (free: 400 code
    302) until the service answers 429; that answer."""
    with httpx.Client() as http:
        for _ in range(500):
            r = http.post(
                f"{base_url}/api/v1/parse",
                json={"url": UNSUPPORTED},
                headers={"Authorization": f"Bearer {token}"},
            )
            if r.status_code == 429:
                return r
            assert r.status_code == 400, r.text
    pytest.fail("the limited key never answered 429")
