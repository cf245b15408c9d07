"""`leanindex.Client`: the Python client of the HTTP API, or of a catalog folder in-process.

    from leanindex import Client
    client = Client("http://127.0.0.1:8000")          # a running `leanindex serve`
    client = Client.local()       # no server (or Client.local("path/to/root")): the server's tools in this process
    client.search("CORE", name_contains="add_comm").to_pandas()

Both modes have the same methods, take the same arguments, validate them with the shared request
models before anything is sent, return the shared response models, and raise `LeanIndexError`
with the server's error object (code, message, details) on a refusal or failure.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from .errors import ErrorCode, LeanIndexError
from .models import (
    EnvironmentsResponse,
    ErrorResponse,
    ExistsResponse,
    InspectManyResponse,
    InspectResponse,
    SearchResponse,
    StopReason,
    TypePattern,
)
from .tools import (
    AUDIT,
    CHECK,
    CHECK_BATCH,
    DIFF,
    ENVIRONMENTS,
    EXISTS,
    INSPECT,
    INSPECT_MANY,
    PROOF_CLOSE,
    PROOF_STATE,
    PROOF_STEP,
    PROOF_STEPS,
    PROOF_TREE,
    SEARCH,
    TARGET,
    TOOLS,
    ToolSpec,
    tool_named,
)
from .validation import invalid_request

if TYPE_CHECKING:
    # Types only: the checker's and the diff's modules (the whole checker, the engine) load in
    # the methods that send their requests, not for a search (the CLI's remote path, issue 30).
    from .checker.batch import ItemLike
    from .checker.models import (
        AuditResponse,
        BatchCheckResponse,
        CheckResponse,
        ProofCloseResponse,
        ProofStateResponse,
        ProofStepResponse,
        ProofStepsResponse,
        TargetCheckResponse,
    )
    from .engine.diff import DeclarationDiff


def declaration_path(name: str) -> str:
    """The HTTP inspect path of declaration `name` (`/v1/declarations/{name}`, without the query).

    Every reserved character is escaped, `/` included (the server's path converter takes the
    rest of the path as the name). Two names need more: `search` is the search route, so a
    declaration named exactly `search` is sent as `«search»`, Lean's escaped printing of the same
    name (the engine reads both alike); `.` and `..` are percent-encoded whole, since HTTP clients
    remove such dot segments from a path (RFC 3986, 5.2.4) before it is sent.
    """
    if name == "search":
        name = "«search»"
    encoded = quote(name, safe="")
    if encoded in (".", ".."):
        encoded = encoded.replace(".", "%2E")
    return "/v1/declarations/" + encoded

class _Backend(Protocol):
    def call(self, spec: ToolSpec, request: BaseModel) -> Any: ...
    def close(self) -> None: ...


class _HttpBackend:
    """Calls a leanindex HTTP server with httpx: every tool at its POST route."""

    def __init__(self, base_url: str, token: str | None, timeout: float):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        # A plain-http server needs no certificates: httpx's default transport loads the
        # system's CA bundle (about 25 ms of CPU, a tenth of a CLI query through a local server)
        # for a TLS context no request of this client would use. Every request goes to
        # `base_url` (relative routes; redirects are not followed), so no https URL ever reaches
        # this transport; proxies from the environment keep their own, verifying transports.
        plain = httpx.HTTPTransport(verify=False) if httpx.URL(base_url).scheme == "http" else None
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout, transport=plain)

    def call(self, spec: ToolSpec, request: BaseModel) -> Any:
        """`spec`'s answer to `request` from its route (`ToolSpec.http_route`, a POST)."""
        method, path = spec.http_route.split(" ", 1)
        body = request.model_dump_json(exclude_none=True)
        try:
            response = self.http.request(method, path, content=body, headers={"Content-Type": "application/json"})
        except httpx.TimeoutException as error:
            raise LeanIndexError(ErrorCode.TIMEOUT, f"no answer from {self.http.base_url} in time: {error}") from None
        except httpx.TransportError as error:
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, f"cannot reach {self.http.base_url}: {error}", {"base_url": str(self.http.base_url)}
            ) from None
        if response.is_success:
            return spec.response_model.model_validate_json(response.content)
        raise _error_from(response)

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
    """The server's own tools (`service.tools.server_tools`: the same calls, the same call gate
    with its `busy` and `timeout` limits, the same errors) in this process, on the event loop
    of a thread of their own, so a notebook's running loop is never entered. No checker: the
    check tools raise `check_disabled` as on a server without one."""

    def __init__(self, root: str | Path | None):
        import asyncio  # here, as the engine: a remote client's start does without them
        import threading

        from .engine import Engine
        from .service.config import ServiceConfig
        from .service.gate import CallGate
        from .service.tools import server_tools

        self.engine = Engine(root)
        config = ServiceConfig()
        self.tools = {spec.name: spec for spec in server_tools(self.engine, CallGate(config.max_concurrent, config.time_budget_s), None)}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="leanindex-client", daemon=True)
        self.thread.start()

    def call(self, spec: ToolSpec, request: BaseModel) -> Any:
        """`spec`'s answer to `request` from the served tool of the same name."""
        import asyncio

        return asyncio.run_coroutine_threadsafe(self.tools[spec.name].call(request), self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()
        self.engine.close()


F = TypeVar("F", bound=Callable[..., Any])


def _answers(tool: str) -> Callable[[F], F]:
    """Mark a method written below as the `Client` method of `tool` (`__tool__`), so a spec's
    `client_method` naming any other method is caught (`add_tool_methods`)."""

    def mark(method: F) -> F:
        method.__tool__ = tool  # type: ignore[attr-defined]  # a plain attribute on a function
        return method

    return mark


def _given(**fields: Any) -> dict[str, Any]:
    """`fields` without those left out (None), so a request missing one is refused as missing,
    with the close name of a misspelt keyword given instead."""
    return {name: value for name, value in fields.items() if value is not None}


def _validated(model: type[BaseModel], **fields: Any) -> Any:
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        raise invalid_request(error.errors(), model=model) from None  # an unknown keyword gets its close names


def _names(names: str | Iterable[str] | None) -> list[str] | None:
    """The names of a batch look-up as a list: one plain string is one name, not its letters
    (None when not given)."""
    if names is None:
        return None
    return [names] if isinstance(names, str) else list(names)


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
        """A client that runs the server's tools in this process on the catalogs under `root`
        (holding `manifests/` and `catalog/`; None: the default root, `$LEANINDEX_ROOT` else the
        user data folder, see `leanindex.home`): the same calls, call gate (`busy`, `timeout`),
        answers and errors as over HTTP (`_LocalBackend`). It has no checker: the check
        methods raise `check_disabled`."""
        client = cls.__new__(cls)
        client._backend = _LocalBackend(root)
        return client

    def call(self, tool: str, **fields: Any) -> Any:
        """The answer of any tool of `leanindex.tools.TOOLS` (dotted name `lean.check` or alias
        `lean_check`) to the request made of `fields` (its request model's fields by name), as
        its response model; the same as the tool's method (`search`, `check`, ...), which adds
        conveniences such as positional arguments.

        Raises `LeanIndexError`: `invalid_request` (an unknown tool, with the closest names; or
        fields the request model refuses, checked here before anything is sent), and what the
        tool raises (its method's docstring).
        """
        spec = tool_named(tool)
        return self._backend.call(spec, _validated(spec.request_model, **fields))

    @_answers(ENVIRONMENTS)
    def environments(self) -> EnvironmentsResponse:
        """Every served profile with its identity, imports, counts and verification state."""
        return self.call(ENVIRONMENTS)

    @_answers(SEARCH)
    def search(self, environment: str, name_contains: str | Sequence[str] | None = None, **filters: Any) -> SearchResponse:
        """One page of a bounded search. `name_contains` is one substring or several (all must
        occur). `filters` are the other fields of `leanindex.models.SearchRequest` by name
        (`type_pattern`, `namespace_prefixes`, `kinds`, `module_prefixes`, `flags`,
        `instances_of`, `uses_constants`, `text`, `text_match` (`"any"`, the default: some word
        of `text`, ranked; `"all"`: every word), `case_sensitive`, `result_limit`, `after`, ...;
        sequences of any kind);
        `type_pattern` may be given as the list of constant names.

        Raises `LeanIndexError`: `invalid_request` (checked here before anything is sent, an
        unknown filter included), `unknown_environment`, `catalog_unavailable`,
        `digest_mismatch`, `timeout`, `busy`, `unauthorized`, `backend_error` (server
        unreachable or not a leanindex answer).
        """
        type_pattern = filters.get("type_pattern")
        if type_pattern is not None and not isinstance(type_pattern, (TypePattern, dict)):
            filters["type_pattern"] = {"constants": list(type_pattern)}
        return self.call(SEARCH, environment=environment, name_contains=name_contains, **filters)

    def iter_search(self, environment: str, name_contains: str | Sequence[str] | None = None, **filters: Any) -> Iterator[SearchResponse]:
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

    @_answers(DIFF)
    def diff(
        self, older: str, newer: str, categories: str | Sequence[str] = (), *, limit: int = 100, after: str | None = None
    ) -> DeclarationDiff:
        """One page of what changed from environment `older` to `newer`, per declaration
        (`lean.catalog.diff`; rules in docs/diff.md): the module gaps, counts of added, removed,
        retyped, reprinted, deprecated and renamed (null when not recorded), then up to `limit` changes of
        `categories` (one category or several; default every recorded one); pass the answer's
        `next_cursor` as `after`.

        Raises `LeanIndexError`: `invalid_request` (bad category, limit or cursor),
        `not_recorded` (a listed category needs deprecation a catalog does not record), and as
        `search`.
        """
        # One category as a plain string, not its letters.
        listed = [categories] if isinstance(categories, str) else list(categories)
        return self.call(DIFF, older=older, newer=newer, categories=listed, limit=limit, after=after)

    @_answers(INSPECT)
    def inspect(self, environment: str, declaration_name: str | None = None, **fields: Any) -> InspectResponse:
        """Everything the catalog holds about one declaration, by exact full name. Other
        keywords are the request's fields by name: a misspelt one (`name=`) is refused with the
        right name, as on every surface.

        Raises `LeanIndexError`: `not_found` (with `details["suggestions"]`), and as `search`.
        """
        return self.call(INSPECT, environment=environment, **_given(declaration_name=declaration_name), **fields)

    @_answers(INSPECT_MANY)
    def inspect_many(self, environment: str, names: str | Iterable[str] | None = None, **fields: Any) -> InspectManyResponse:
        """`inspect` of 1-100 names in one call (`lean.declaration.inspect_many`; one name may be
        given as a plain string): one result per name in the order given, each the declaration
        (`response`) or the error `inspect` would raise for it (`error`: `not_found`,
        `missing_module`, `invalid_request`) with the catalog's `closest` names.

        Raises `LeanIndexError`: `invalid_request` for the call (no names, more than 100, a name
        over 1024 characters; checked here before anything is sent), and as `search`; a name's
        own error is its result's, never raised.
        """
        return self.call(INSPECT_MANY, environment=environment, **_given(names=_names(names)), **fields)

    @_answers(EXISTS)
    def exists(self, environment: str, names: str | Iterable[str] | None = None, **fields: Any) -> ExistsResponse:
        """Whether 1-100 names are declarations (`lean.declaration.exists`; one name may be given
        as a plain string), e.g. `client.exists("CORE", ["Nat.add_comm", "Nat.add_comm'"])`: per
        name in the order given, `exists`, `kind` and `module`, or `error_code` and `closest`;
        read from the catalog's name index, for verifying citations.

        Raises `LeanIndexError` as `inspect_many`.
        """
        return self.call(EXISTS, environment=environment, **_given(names=_names(names)), **fields)

    @_answers(CHECK)
    def check(self, environment: str, code: str, *, reference: Any = None, timeout_s: float | None = None) -> CheckResponse:
        """Lean's verdict on the complete file `code` (`lean.check`). `reference` pins
        statements (a `leanindex.checker.models.Reference` or its dict: `theorems` [{name,
        statement}] and/or `file`); a changed one is `rejected` with `statement_changed`. Over
        HTTP only.

        Raises `LeanIndexError` as `check_target`, and `forbidden_command` (the reference holds
        a command that can forge a verdict).
        """
        return self.call(CHECK, environment=environment, code=code, reference=reference, timeout_s=timeout_s)

    @_answers(CHECK_BATCH)
    def check_batch(self, items: Iterable[ItemLike]) -> BatchCheckResponse:
        """Lean's verdicts on 1-256 files at once (`lean.check.batch`): `items` are
        `leanindex.checker.models.BatchItem`s or `(id, CheckRequest)` pairs, ids unique. One
        result per item, in order, each a response or the error `check` would have raised.
        Over HTTP only.

        Raises `LeanIndexError`: `invalid_request` (checked here: no items, over 256, repeated
        ids, a malformed item), `check_disabled`, `timeout`, `busy`, `unauthorized`,
        `backend_error` (server unreachable); an item's own failure is its result's `error`.
        """
        from .checker.batch import as_item
        from .checker.models import BatchCheckRequest

        try:
            request = BatchCheckRequest(items=[as_item(item) for item in items])
        except ValidationError as error:
            raise invalid_request(error.errors()) from None
        return self._backend.call(tool_named(CHECK_BATCH), request)

    def check_many(
        self, items: Iterable[ItemLike], *, batch_size: int = 64
    ) -> Iterator[tuple[str, CheckResponse | LeanIndexError]]:
        """`(id, response or error)` for every item of `items` (read lazily), sent as batches of
        `batch_size` (1-256) through `check_batch`, in the items' order within each batch; the
        same shape as `Checker.check_many`. Raises as `check_batch` for a whole batch's
        failure (the items of earlier batches were yielded)."""
        from .checker.batch import outcome_of
        from .checker.models import MAX_BATCH_ITEMS

        if not 1 <= batch_size <= MAX_BATCH_ITEMS:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, f"batch_size must be 1 to {MAX_BATCH_ITEMS}, not {batch_size}", {})
        source = iter(items)
        while chunk := list(islice(source, batch_size)):
            for result in self.check_batch(chunk).results:
                yield result.id, outcome_of(result)

    @_answers(AUDIT)
    def audit(self, environment: str, code: str, *, timeout_s: float | None = None) -> AuditResponse:
        """Every declaration the file `code` adds with its axioms and `sorry` use, and a verdict
        that is never `accepted` unless all of them were audited and there is one at least
        (`lean.audit`). Over HTTP only. Raises `LeanIndexError` as `check_target`."""
        return self.call(AUDIT, environment=environment, code=code, timeout_s=timeout_s)

    @_answers(TARGET)
    def check_target(
        self,
        environment: str,
        code: str,
        target: str | None = None,
        candidates: Sequence[str] = (),
        *,
        mode: str = "target",
        timeout_s: float | None = None,
        reference: Any = None,
    ) -> TargetCheckResponse:
        """Lean's verdicts on `candidates` (whole declarations) replacing declaration `target` of
        the file `code`, against the environment before it, prepared once per server worker
        (`lean.check.target`); `mode="sequential"` (no target, no candidates) checks every
        command of `code` in order. `reference` (target mode) fences the target's statement as
        `check` does. Over HTTP only.

        Raises `LeanIndexError`: `invalid_request` (checked here before anything is sent),
        `not_found` (no declaration named `target`), `header_mismatch`, `payload_too_large`,
        `check_disabled` (a local client, or a server without a checker), `timeout`, `busy`,
        `backend_error`, `unknown_environment`, `unauthorized`.
        """
        return self.call(
            TARGET, environment=environment, code=code, target=target, candidates=list(candidates), mode=mode,
            timeout_s=timeout_s, reference=reference,
        )

    @_answers(PROOF_STATE)
    def proof_state(
        self, environment: str, code: str, position: dict[str, int] | None = None, *, session: str = "default", timeout_s: float | None = None
    ) -> ProofStateResponse:
        """Open a proof at a `sorry` of `code` (`lean.proof.state`; `position` = {"line",
        "column"} of the `sorry` when there are several). Over HTTP only.

        Raises `LeanIndexError`: `invalid_request`, `forbidden_command`, and as `check_target`.
        """
        return self.call(PROOF_STATE, environment=environment, code=code, position=position, session=session, timeout_s=timeout_s)

    @_answers(PROOF_STEP)
    def proof_step(
        self, environment: str, state_id: str, tactic: str, *, session: str = "default", timeout_s: float | None = None
    ) -> ProofStepResponse:
        """Run `tactic` on an open state (`lean.proof.step`); Lean refusing it is `status
        "error"`. Raises `LeanIndexError`: `unknown_proof_state`, `forbidden_command`, and as
        `check_target`."""
        return self.call(PROOF_STEP, environment=environment, state_id=state_id, tactic=tactic, session=session, timeout_s=timeout_s)

    @_answers(PROOF_CLOSE)
    def proof_close(self, environment: str, state_id: str, *, session: str = "default") -> ProofCloseResponse:
        """Release an open state (`lean.proof.close`). Raises `unknown_proof_state`."""
        return self.call(PROOF_CLOSE, environment=environment, state_id=state_id, session=session)

    @_answers(PROOF_STEPS)
    def proof_steps(
        self, environment: str, code: str, theorem: str | None = None, *, include_theorems: bool = False, tree: bool = False,
        timeout_s: float | None = None,
    ) -> ProofStepsResponse:
        """Every tactic of `theorem`'s proof in `code` with its goals before and after
        (`lean.proof.steps`), or with `tree=True` the proof as goal boxes (`lean.proof.tree`);
        `include_theorems` adds the used constants' signatures from the server's catalog. Over
        HTTP only. Raises `LeanIndexError`: `not_found` (no such declaration),
        `forbidden_command`, and as `check_target`."""
        return self.call(
            PROOF_TREE if tree else PROOF_STEPS, environment=environment, code=code, theorem=theorem, include_theorems=include_theorems,
            timeout_s=timeout_s,
        )

    def close(self) -> None:
        """Close the HTTP connection pool (or the local engine's catalogs)."""
        self._backend.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tool_method(spec: ToolSpec) -> Any:
    """The `Client` method of a tool that has none written above: keyword arguments named as
    the request model's fields (its signature says so, for `help()` and notebooks), the tool's
    description as its docstring, answered by `Client.call`."""

    def method(self: Client, **fields: Any) -> Any:
        return self.call(spec.name, **fields)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True),
            annotation=field.annotation,
        )
        for name, field in spec.request_model.model_fields.items()
    ]
    method.__name__ = method.__qualname__ = spec.client_method
    method.__tool__ = spec.name  # type: ignore[attr-defined]  # as `_answers` marks written ones
    method.__doc__ = f"`{spec.name}`: {spec.title}.\n\n{spec.description}\n\nRaises `LeanIndexError` as `Client.call`."
    # `inspect.signature` reads `__signature__`, which function objects accept but are not typed with.
    method.__signature__ = inspect.Signature(parameters, return_annotation=spec.response_model)  # type: ignore[attr-defined]
    return method


class _ToolMethod:
    """`_tool_method(spec)` made on first access (on the class, for `help()`, or on a client):
    its signature reads the request model, which may be the checker's, whose import a search
    through the client must not pay. Carries `__tool__` as the method does."""

    def __init__(self, spec: ToolSpec):
        self.spec = spec
        self.__tool__ = spec.name
        self.method: Callable[..., Any] | None = None

    def __get__(self, client: Client | None, owner: type | None = None) -> Any:
        if self.method is None:
            self.method = _tool_method(self.spec)
        return self.method if client is None else self.method.__get__(client, owner)


def add_tool_methods() -> None:
    """Give `Client` a method for every tool of `TOOLS` that has none written above (each
    method answering a tool carries its name in `__tool__`). Raises `RuntimeError` when a
    spec's `client_method` names a method that answers something else (`close`, `call`,
    another tool's): that tool would silently have no method."""
    for spec in TOOLS:
        written = Client.__dict__.get(spec.client_method)
        if written is None:
            setattr(Client, spec.client_method, _ToolMethod(spec))
        elif getattr(written, "__tool__", None) != spec.name:
            raise RuntimeError(f"tool {spec.name}: Client.{spec.client_method} answers {getattr(written, '__tool__', 'no tool')}")


add_tool_methods()
