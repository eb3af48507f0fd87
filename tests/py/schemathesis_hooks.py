"""A check of our own for schemathesis: a request schemathesis generated as
valid (positive mode) that the service answers 400 must be a URL the service
does not support (code "302"), never a body it calls invalid."""

import schemathesis


@schemathesis.check
def positive_400_is_unsupported_url(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        code = response.json().get("code")
    except Exception:  # noqa: BLE001 - a non-JSON body is a failure too
        code = None
    if code != "302":
        raise AssertionError(f"a schema-valid request was answered 400 with code {code!r}, expected \"302\"")
    return None
