"""Standard Webhooks verification. The first case is the specification's
published example (secret, id, timestamp, body and signature as the
Standard Webhooks reference libraries test them)."""

import base64

import pytest

from mediaparse.webhooks import WebhookVerificationError, sign, verify

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(signature=SIGNATURE, timestamp=TIMESTAMP, msg_id=MSG_ID):
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


def test_the_published_example_verifies():
    assert verify(SECRET, headers(), BODY, now=TIMESTAMP) == {"test": 2432232314}
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == SIGNATURE


def test_header_names_are_case_insensitive_and_one_of_several_signatures_suffices():
    h = {k.title(): v for k, v in headers(signature=f"v1,bm90LWl0 {SIGNATURE}").items()}
    assert verify(SECRET, h, BODY, now=TIMESTAMP + 10)


@pytest.mark.parametrize(
    "change",
    [
        lambda: (SECRET, headers(), b'{"test": 2432232315}', TIMESTAMP),
        lambda: ("whsec_" + base64.b64encode(b"another secret 1").decode(), headers(), BODY, TIMESTAMP),
        lambda: (SECRET, headers(msg_id="msg_other"), BODY, TIMESTAMP),
        lambda: (SECRET, headers(signature="v2," + SIGNATURE[3:]), BODY, TIMESTAMP),
        lambda: (SECRET, headers(), BODY, TIMESTAMP + 301),
        lambda: (SECRET, headers(), BODY, TIMESTAMP - 301),
        lambda: (SECRET, {"webhook-id": MSG_ID, "webhook-signature": SIGNATURE}, BODY, TIMESTAMP),
        lambda: (SECRET, headers(timestamp="soon"), BODY, TIMESTAMP),
    ],
    ids=["body", "secret", "id", "version", "late", "early", "no-timestamp", "bad-timestamp"],
)
def test_anything_altered_or_stale_is_refused(change):
    secret, h, body, now = change()
    with pytest.raises(WebhookVerificationError):
        verify(secret, h, body, now=now)


def test_the_tolerance_is_the_callers():
    assert verify(SECRET, headers(), BODY, tolerance=3600, now=TIMESTAMP + 3000)
