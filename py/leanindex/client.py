"""`leanindex.Client`: the Python client of the HTTP API, or of a catalog folder in-process.

    from leanindex import Client
    client = Client("http://127.0.0.1:8000")          # a running `leanindex serve`
    client = Client.local()       # no server (or Client.local("path/to/root")): the engine in this process
    client.search("CORE", name_contains="add_comm").to_pandas()

Both modes have the same methods, take the same arguments, validate them with the shared request
models before anything is sent, return the shared response models, and raise `LeanIndexError`
with the server's error object (code, message, details) on a refusal or failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from .engine import Engine
from .errors import ErrorCode, LeanIndexError
from .models import (
    EnvironmentsResponse,
    ErrorResponse,
    InspectRequest,
    InspectResponse,
    SearchRequest,
    SearchResponse,
    StopReason,
    TypePattern,
)
from .validation import invalid_request


class _Backend(Protocol):
    def search(self, request: SearchRequest) -> SearchResponse: ...
    def inspect(self, request: InspectRequest) -> InspectResponse: ...
    def environments(self) -> EnvironmentsResponse: ...
    def close(self) -> None: ...


class _HttpBackend:
    """Calls a leanindex HTTP server with httpx."""

    def __init__(self, base_url: str, token: str | None, timeout: float):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def _call(self, method: str, path: str, model: type[Any], **kwargs: Any) -> Any:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TimeoutException as error:
            raise LeanIndexError(ErrorCode.TIMEOUT, f"no answer from {self.http.base_url} in time: {error}") from None
        except httpx.TransportError as error:
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, f"cannot reach {self.http.base_url}: {error}", {"base_url": str(self.http.base_url)}
            ) from None
        if response.is_success:
            return model.model_validate_json(response.content)
        raise _error_from(response)

    def search(self, request: SearchRequest) -> SearchResponse:
        body = request.model_dump_json(exclude_none=True)
        return self._call("POST", "/v1/declarations/search", SearchResponse, content=body, headers={"Content-Type": "application/json"})

    def inspect(self, request: InspectRequest) -> InspectResponse:
        # Every reserved character escaped, `/` included: the server's path converter takes the
        # rest of the path as the name.
        path = "/v1/declarations/" + quote(request.declaration_name, safe="")
        return self._call("GET", path, InspectResponse, params={"environment": request.environment})

    def environments(self) -> EnvironmentsResponse:
        return self._call("GET", "/v1/environments", EnvironmentsResponse)

    def close(self) -> None:
        self.http.close()


def _error_from(response: httpx.Response) -> LeanIndexError:
    """The server's error object as a `LeanIndexError`; `backend_error` when the body is not one
    (e.g. a proxy's own error page)."""
    try:
        body = ErrorResponse.model_validate_json(response.content).error
        return LeanIndexError(ErrorCode(body.code), body.message, body.details)
    except (ValidationError, ValueError):
        return LeanIndexError(
            ErrorCode.BACKEND_ERROR,
            f"HTTP {response.status_code} without an error object from {response.request.url}",
            {"status": response.status_code, "body": response.text[:500]},
        )


class _LocalBackend:
    """Calls the engine in this process."""

    def __init__(self, root: str | Path | None):
        self.engine = Engine(root)

    def search(self, request: SearchRequest) -> SearchResponse:
        return self.engine.search(request)

    def inspect(self, request: InspectRequest) -> InspectResponse:
        return self.engine.inspect(request)

    def environments(self) -> EnvironmentsResponse:
        return self.engine.environments()

    def close(self) -> None:
        self.engine.close()


def _validated(model: type[BaseModel], **fields: Any) -> Any:
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        raise invalid_request(error.errors()) from None


class Client:
    """Search and inspect Lean declarations through a leanindex HTTP server (or, with
    `Client.local`, directly on a catalog folder).

    `base_url` is the server's address (default `http://127.0.0.1:8000`), `token` its bearer
    token when it has one, `timeout` the seconds to wait for one answer. Use as a context
    manager, or call `close()`.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        token: str | None = None,
        *,
        timeout: float = 30.0,
    ):
        self._backend: _Backend = _HttpBackend(base_url, token, timeout)

    @classmethod
    def local(cls, root: str | Path | None = None) -> Client:
        """A client that runs the query engine in this process on the catalogs under `root`
        (holding `manifests/` and `catalog/`; None: the default root, `$LEANINDEX_ROOT` else the
        user data folder, see `leanindex.home`); same methods and answers as over HTTP."""
        client = cls.__new__(cls)
        client._backend = _LocalBackend(root)
        return client

    def environments(self) -> EnvironmentsResponse:
        """Every served profile with its identity, imports, counts and verification state."""
        return self._backend.environments()

    def search(self, environment: str, name_contains: str | None = None, **filters: Any) -> SearchResponse:
        """One page of a bounded search. `filters` are the other fields of
        `leanindex.models.SearchRequest` by name (`type_pattern`, `namespace_prefixes`, `kinds`,
        `module_prefixes`, `result_limit`, `after`, ...; sequences of any kind);
        `type_pattern` may be given as the list of constant names.

        Raises `LeanIndexError`: `invalid_request` (checked here before anything is sent, an
        unknown filter included), `unknown_environment`, `catalog_unavailable`,
        `digest_mismatch`, `timeout`, `busy`, `unauthorized`, `backend_error` (server
        unreachable or not a leanindex answer).
        """
        type_pattern = filters.get("type_pattern")
        if type_pattern is not None and not isinstance(type_pattern, (TypePattern, dict)):
            filters["type_pattern"] = {"constants": list(type_pattern)}
        request = _validated(SearchRequest, environment=environment, name_contains=name_contains, **filters)
        return self._backend.search(request)

    def iter_search(self, environment: str, name_contains: str | None = None, **filters: Any) -> Iterator[SearchResponse]:
        """Every page of a search, following `next_cursor` until `stop_reason` is `EXHAUSTED`.

        Takes the arguments of `search` (without `after`); raises as `search`.
        """
        if "after" in filters:
            raise TypeError("iter_search follows the cursor itself; do not pass `after`")
        after = None
        while True:
            page = self.search(environment, name_contains, after=after, **filters)
            yield page
            if page.stop_reason is StopReason.EXHAUSTED:
                return
            after = page.next_cursor

    def inspect(self, environment: str, declaration_name: str) -> InspectResponse:
        """Everything the catalog holds about one declaration, by exact full name.

        Raises `LeanIndexError`: `not_found` (with `details["suggestions"]`), and as `search`.
        """
        return self._backend.inspect(_validated(InspectRequest, environment=environment, declaration_name=declaration_name))

    def close(self) -> None:
        """Close the HTTP connection pool (or the local engine's catalogs)."""
        self._backend.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
