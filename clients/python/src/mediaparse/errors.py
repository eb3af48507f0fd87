"""The error the client raises for every non-success answer of the service."""

from __future__ import annotations

from typing import Any, Optional


class MediaparseError(Exception):
    """An error envelope ``{status, data: null, msg, code}`` from the service.

    ``retry_after`` is the answer's ``Retry-After`` in seconds, when it had one.
    """

    def __init__(
        self,
        status: int,
        code: Optional[str],
        msg: str,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
        body: Any = None,
    ) -> None:
        super().__init__(f"{status} {code}: {msg}")
        self.status = status
        self.code = code
        self.msg = msg
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body
