"""Client for the mediaparse API: parse, batch, jobs, webhook verification."""

from ._core import RetryPolicy
from .async_client import AsyncClient
from .client import Client
from .errors import MediaparseError
from .models import (
    Audio,
    Batch,
    BatchItem,
    Image,
    Job,
    JobEvent,
    Media,
    Parsed,
    PlatformResult,
    Video,
)
from .webhooks import WebhookVerificationError

__all__ = [
    "AsyncClient",
    "Audio",
    "Batch",
    "BatchItem",
    "Client",
    "Image",
    "Job",
    "JobEvent",
    "Media",
    "MediaparseError",
    "Parsed",
    "PlatformResult",
    "RetryPolicy",
    "Video",
    "WebhookVerificationError",
]
