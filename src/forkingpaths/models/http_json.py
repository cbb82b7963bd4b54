"""A thin aiohttp client for OpenAI-compatible JSON endpoints, and the errors it raises."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import aiohttp

from forkingpaths.core.version import __version__


class APIError(Exception):
    """A failed request to an OpenAI-compatible endpoint (named like the openai SDK's errors,
    so messages read the same whichever client sent the request)."""


class APIConnectionError(APIError):
    """The request got no HTTP answer: connection refused or dropped, DNS failure."""


class APITimeoutError(APIConnectionError):
    """No complete answer within the request timeout."""


class APIStatusError(APIError):
    """The server answered with a status other than 2xx."""

    def __init__(self, status_code: int, body: object, headers: Mapping[str, str]) -> None:
        # Worded as the SDK words it: the error's own message when the body is OpenAI-shaped.
        error = body.get("error", body) if isinstance(body, dict) else body
        message = error.get("message") if isinstance(error, dict) else None
        if not (isinstance(message, str) and message):
            # Not OpenAI-shaped (a proxy's HTML page, a bare string): its start says what broke.
            message = str(body)[:500] if body not in (None, "") else None
        super().__init__(f"Error code: {status_code}" + (f" - {message}" if message else ""))
        self.status_code = status_code
        self.body = error
        """The error object of an OpenAI-shaped body, else the body (parsed JSON or text)."""
        self.headers = headers
        code = error.get("code") if isinstance(error, dict) else None
        self.code: str | None = str(code) if code is not None else None
        """The machine-readable error code of OpenAI-style bodies (`context_length_exceeded`)."""


class BadRequestError(APIStatusError):
    """HTTP 400."""


class AuthenticationError(APIStatusError):
    """HTTP 401."""


class PermissionDeniedError(APIStatusError):
    """HTTP 403."""


class NotFoundError(APIStatusError):
    """HTTP 404."""


class ConflictError(APIStatusError):
    """HTTP 409."""


class UnprocessableEntityError(APIStatusError):
    """HTTP 422."""


class RateLimitError(APIStatusError):
    """HTTP 429."""


class InternalServerError(APIStatusError):
    """HTTP 5xx."""


_STATUS_ERRORS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error(status: int, raw: bytes, headers: Mapping[str, str]) -> APIStatusError:
    """The APIStatusError for a non-2xx answer (its body parsed as JSON when it is JSON)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text
    kind = _STATUS_ERRORS.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    location = headers.get("Location")
    if 300 <= status < 400 and location:
        body = f"the endpoint answers with a redirect to {location}; use that URL as --base-url"
    return kind(status, body, headers)


class MalformedResponse(APIError):
    """A 2xx answer whose body is not a chat completion (not JSON, missing `choices`)."""


def encode_json(body: Any) -> bytes:
    """Request bytes as the openai SDK writes them (httpx's settings): compact, UTF-8, no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class JSONEndpoint:
    """POSTs JSON to one OpenAI-compatible base URL and returns the parsed answer.

    One aiohttp session per event loop (a connection pool belongs to the loop that opened it),
    made on first use so the endpoint can be built outside any loop. The pool itself is
    unbounded: callers bound concurrency with their own limits, which Ray shares across nodes.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        timeout_s: float,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"forkingpaths/{__version__}",
            **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
            **(headers or {}),
        }
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None

    def _current_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session_loop is not loop or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=self._timeout,
                headers=self._headers,
                # Nothing here reads cookies; a jar would only cost time per response.
                cookie_jar=aiohttp.DummyCookieJar(),
            )
            self._session_loop = loop
        return self._session

    async def post(self, path: str, body: Any) -> Any:
        """POST `body` as JSON to `base_url + path`; the parsed JSON answer of a 2xx response.

        Raises APIStatusError (by status) for other answers, APITimeoutError and
        APIConnectionError when none came, MalformedResponse for a 2xx body that is not JSON.
        """
        session = self._current_session()
        url = self.base_url + path
        try:
            # A redirect is not followed: aiohttp would re-send the POST as a GET without its
            # body, and the server's answer to that would hide where the endpoint moved.
            async with session.post(url, data=encode_json(body), allow_redirects=False) as response:
                raw = await response.read()
                status = response.status
                if status >= 300:
                    raise status_error(status, raw, response.headers)
                content_type = response.headers.get("Content-Type", "no content type")
        except TimeoutError as err:
            raise APITimeoutError(f"no answer from {url} within {self._timeout.total} s") from err
        except aiohttp.ClientError as err:
            raise APIConnectionError(f"connection to {url} failed: {err}") from err
        try:
            return json.loads(raw)
        except ValueError as err:  # JSONDecodeError and UnicodeDecodeError both derive from it
            start = raw[:200].decode("utf-8", errors="replace")
            raise MalformedResponse(
                f"unreadable response body (HTTP {status}, {content_type}): {err}; it begins"
                f" {start!r}"
            ) from err

    async def aclose(self) -> None:
        """Close the session of the running loop (one of another loop cannot be closed here)."""
        session, self._session = self._session, None
        loop, self._session_loop = self._session_loop, None
        if session is not None and loop is asyncio.get_running_loop():
            await session.close()
