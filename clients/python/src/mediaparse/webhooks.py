"""Verifying a job's callback: the Standard Webhooks signature.

The service POSTs with ``webhook-id``, ``webhook-timestamp`` (Unix seconds)
and ``webhook-signature: v1,<base64 HMAC-SHA256>`` of ``"{id}.{timestamp}.{body}"``,
keyed with the base64 part of the key's ``whsec_…`` secret. A header may
carry several space-separated signatures (during a secret rotation); one
match is enough.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """The request is not a genuine, fresh callback of this secret."""


def _secret_bytes(secret: str) -> bytes:
    text = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        raise WebhookVerificationError("the secret is not whsec_<base64>") from e


def sign(secret: str, msg_id: str, timestamp: int, body: Union[bytes, str]) -> str:
    """The ``v1,<base64>`` signature of one message (for tests and relays)."""
    payload = body.encode() if isinstance(body, str) else body
    signed = f"{msg_id}.{timestamp}.".encode() + payload
    digest = hmac.new(_secret_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"missing header {name}")


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: Union[bytes, str],
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> Any:
    """Check the signature and the timestamp's age; return the parsed JSON body.

    Raises :class:`WebhookVerificationError` when a header is missing, the
    timestamp is further than ``tolerance`` seconds from ``now`` (either
    way) or no signature matches.
    """
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError as e:
        raise WebhookVerificationError("webhook-timestamp is not an integer") from e
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance")
    expected = sign(secret, msg_id, timestamp, body).split(",", 1)[1]
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected.encode()):
            payload = body.decode() if isinstance(body, bytes) else body
            return json.loads(payload)
    raise WebhookVerificationError("no signature matches")
