"""Typed errors raised anywhere below the API; the API renders each one way (RFC 9457)."""

from __future__ import annotations


class AppError(Exception):
    status: int = 500
    title: str = "Internal Server Error"

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field


class NotFoundError(AppError):
    status = 404
    title = "Not Found"


class InvalidInputError(AppError):
    status = 422
    title = "Unprocessable Content"


class PayloadTooLargeError(AppError):
    status = 413
    title = "Content Too Large"


class ConflictError(AppError):
    status = 409
    title = "Conflict"


class PreconditionFailedError(AppError):
    status = 412
    title = "Precondition Failed"


class UnauthorizedError(AppError):
    status = 401
    title = "Unauthorized"


class ForbiddenError(AppError):
    status = 403
    title = "Forbidden"


class RetryLaterError(AppError):
    """An error the client may retry after `retry_after_s` (rendered as Retry-After)."""

    def __init__(self, detail: str, *, retry_after_s: int = 2) -> None:
        super().__init__(detail)
        self.retry_after_s = retry_after_s


class RateLimitedError(RetryLaterError):
    status = 429
    title = "Too Many Requests"


class ServiceUnavailableError(RetryLaterError):
    status = 503
    title = "Service Unavailable"


class StillRunningError(RetryLaterError):
    """The same request is still being processed (Idempotency-Key); retry shortly."""

    status = 409
    title = "Conflict"


class SearchTimeoutError(ServiceUnavailableError):
    """A search ran past its statement timeout; nothing was changed."""


class OverloadedError(ServiceUnavailableError):
    """This tenant already holds its share of the service (connections or model lanes)."""


class MisdirectedRequestError(AppError):
    """The request names a host this service does not answer for (DNS rebinding)."""

    status = 421
    title = "Misdirected Request"


class UnsupportedMediaTypeError(AppError):
    status = 415
    title = "Unsupported Media Type"
