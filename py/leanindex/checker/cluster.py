"""The checker on a Ray cluster (`leanindex[ray]`): actors that each own one unchanged `Checker`
(its warm REPL pools, limits, refusals and verdicts), and a front, `RayChecker`, a
`backend.CheckerBackend` like the local `Checker`: its `perform` forwards any hosted operation
of `operations.OPERATIONS` to an actor, so `leanindex check-batch`, `serve` and `mcp` take
`--ray`.

Placement: each request goes to the live actor with the fewest requests in flight, unless an
actor that served the same affinity key recently (the profile and the file's header; for a
target check also the file and target, whose prefix environment that actor's worker keeps) is
busier than it by fewer requests than an actor has REPLs; Ray spreads the actors over the nodes
(`SPREAD`).

Faults: an actor that dies (its process or node; `ray.kill`) is replaced by a new one. Each
request that was in flight on it is, by `on_actor_death`, retried once on another actor
(`retry`, the default) or answered `backend_error` (`details.reason` `actor_died`); a request
that was in flight on two actors that died is answered `backend_error` with `details.reason`
`actors_died_twice` (a poisoned input that kills its host is never retried a third time). No
request is lost or answered twice, and every verdict comes from a Lean REPL that finished the
check. Operations that are not `hosted` (proof states, `lean.proof.state`, `.step`, `.close`,
live in one REPL; `lean.proof.steps` and `.tree` read the serving process's catalog) are not
served through the cluster (`check_disabled`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import BaseModel, Field

from ..base import Frozen
from ..engine import Engine
from ..errors import ErrorBody, ErrorCode, LeanIndexError
from .backend import CheckerBackend
from .batch import result_of
from .checker import Checker
from .config import CheckerConfig
from .header import parse_header
from .models import AuditRequest, BatchItem, BatchResult, CheckRequest, CheckResponse, TargetCheckRequest
from .operations import Check, Inspect, TargetCandidates
from .operations import operation as operation_named

log = logging.getLogger(__name__)

#: Affinity keys remembered per actor (least recently used forgotten first).
WARM_KEYS = 4096


#: What happens to a request whose actor died under it (`RaySettings.on_actor_death`).
ActorDeathPolicy = Literal["retry", "backend_error"]
ON_ACTOR_DEATH: tuple[str, ...] = get_args(ActorDeathPolicy)


class RaySettings(Frozen):
    """How the front uses the cluster.

    - `address`: `auto` (Ray's own search: `RAY_ADDRESS`, else the latest cluster started with
      `ray start` on this machine, else a new local cluster) or a cluster address
      (`HOST:6379`, `ray://HOST:10001`);
    - `actors`: checker actors kept alive; `actor_cpus` the CPUs each reserves (default: its REPLs,
      the sum of the profiles' `workers`); `actor_memory_mb` the memory each reserves (Ray's
      `memory` resource, MiB; none by default);
    - `on_actor_death`: `retry` (once, on another actor) or `backend_error`;
    - `start_timeout_s`: how long an actor may take to start its REPLs (header elaborated).
    """

    address: str = "auto"
    actors: Annotated[int, Field(ge=1, le=10_000)] = 2
    actor_cpus: Annotated[float, Field(ge=0)] | None = None
    actor_memory_mb: Annotated[int, Field(ge=1)] | None = None
    on_actor_death: ActorDeathPolicy = "retry"
    start_timeout_s: Annotated[float, Field(gt=0)] = 900.0


#: Seconds between warnings about an actor that has not started yet.
STILL_STARTING_S = 30.0


def import_ray() -> Any:
    """The `ray` module; `invalid_request` saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise LeanIndexError(
            ErrorCode.INVALID_REQUEST, "--ray needs Ray: pip install 'leanindex[ray]'", {"missing": "ray"}
        ) from None
    return ray


def process_tree_rss(pid: int) -> int:
    """Resident bytes of process `pid` and all its descendants (an actor and its REPLs)."""
    import psutil

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for proc in processes:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total


class CheckerHost:
    """The body of a checker actor: one `Checker` for `configs` (JSON of `CheckerConfig`s), run
    on the actor's event loop, its unknown-name suggestions from the catalogs under
    `catalog_root` on the actor's node (none without one; logged when that root cannot answer,
    as on one machine). Requests and answers cross as JSON text; a refusal or tool failure comes
    back as `("error", ErrorBody JSON)`, an answer as `("ok", response JSON)`."""

    def __init__(self, configs: list[str], catalog_root: str | None = None):
        self.engine = Engine(catalog_root) if catalog_root is not None else None
        self.checker = Checker(
            [CheckerConfig.model_validate_json(text) for text in configs], close_names=self.engine.close_names if self.engine else None
        )

    async def start(self) -> dict[str, int]:
        """Start every profile's REPLs; answers `stats()`. Raises the start failure."""
        await self.checker.start()
        return self.stats()

    async def call(self, method: str, request: str) -> tuple[str, str]:
        """Answer the operation `method` (a hosted one of `operations.OPERATIONS`) for the request
        JSON `request`."""
        try:
            response = await self.checker.perform(method, operation_named(method).request_model.model_validate_json(request))
        except LeanIndexError as error:
            return "error", error.body().model_dump_json()
        return "ok", response.model_dump_json()

    def stats(self) -> dict[str, int]:
        """`pid` of the actor process and `rss_bytes` of it with its REPLs."""
        return {"pid": os.getpid(), "rss_bytes": process_tree_rss(os.getpid())}

    async def close(self) -> None:
        """Stop every REPL, and close the catalogs."""
        await self.checker.close()
        if self.engine is not None:
            self.engine.close()


@dataclass(eq=False)
class _Actor:
    """The front's view of one actor."""

    number: int
    handle: Any
    ready: bool = False
    alive: bool = True
    in_flight: int = 0
    #: Requests this actor answered (a death under a request does not count).
    served: int = 0
    pid: int | None = None
    warm: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def remember(self, key: str) -> None:
        """Mark `key` (profile and header) as warm here, the most recent of `WARM_KEYS` kept."""
        self.warm[key] = None
        self.warm.move_to_end(key)
        while len(self.warm) > WARM_KEYS:
            self.warm.popitem(last=False)


ResponseT = TypeVar("ResponseT", bound=BaseModel)


def affinity_key(method: str, request: BaseModel) -> str:
    """The profile and header of the request's file; for a target check also the file and
    target (the prefix environment a worker prepares and keeps). Raises `internal_error` for a
    request without a file: only the hosted operations, whose requests all have one, are
    forwarded (`RayChecker.perform`)."""
    if not isinstance(request, CheckRequest | AuditRequest | TargetCheckRequest):
        raise LeanIndexError(ErrorCode.INTERNAL_ERROR, f"{method} has no file to route by", {"operation": method})
    parts = [str(request.environment).lower(), "\n".join(parse_header(request.code).imports)]
    if method == TargetCandidates.name and isinstance(request, TargetCheckRequest):
        parts += [request.code, str(request.target)]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


class RayChecker(CheckerBackend):
    """The checker's API backed by Ray actors (see the module docstring). Use from one event
    loop: `await start()`, calls, `await close()`.

    `start` connects to (or starts) the cluster and starts `settings.actors` actors, raising
    `invalid_request` without Ray, `backend_error` when the cluster cannot be reached or an
    actor does not start (the failure in the message). Calls raise what the local `Checker` raises, and `backend_error` when no
    actor is alive or a request's actors died (`details.reason`).
    """

    def __init__(
        self, configs: CheckerConfig | Sequence[CheckerConfig], settings: RaySettings | None = None, *, catalog_root: str | Path | None = None
    ):
        items = [configs] if isinstance(configs, CheckerConfig) else list(configs)
        self.catalog_root = str(catalog_root) if catalog_root is not None else None
        if not items:
            raise LeanIndexError(ErrorCode.INVALID_REQUEST, "no profile configured for the checker", {})
        self.configs = {c.profile: c for c in items}
        self.settings = settings or RaySettings()
        self.actors: list[_Actor] = []
        self.deaths = 0
        self._numbers = 0
        self._remote: Any = None
        self._owns_connection = False
        self._changed: asyncio.Event | None = None
        self._closed = False

    @property
    def repls_per_actor(self) -> int:
        """Warm REPLs each actor runs (every profile's workers)."""
        return sum(c.workers for c in self.configs.values())

    def batch_width(self) -> int:
        """A batch's default checks in flight: each actor's own batch width, times the actors."""
        return self.settings.actors * min(c.workers + min(c.workers, c.queue_size) for c in self.configs.values())

    async def start(self) -> None:
        """Connect to the cluster and start the actors (see the class docstring)."""
        ray = import_ray()
        if not ray.is_initialized():
            address = None if self.settings.address == "auto" else self.settings.address
            try:
                ray.init(address=address, log_to_driver=False)
            except Exception as error:  # noqa: BLE001  (Ray raises ConnectionError, RuntimeError, ValueError...)
                raise LeanIndexError(
                    ErrorCode.BACKEND_ERROR,
                    f"cannot reach the Ray cluster {self.settings.address!r}: {_cause(error)}",
                    {"address": self.settings.address},
                ) from None
            self._owns_connection = True
        self._changed = asyncio.Event()
        options: dict[str, Any] = {
            "num_cpus": self.settings.actor_cpus if self.settings.actor_cpus is not None else self.repls_per_actor,
            "max_restarts": 0,
            "max_task_retries": 0,
            "scheduling_strategy": "SPREAD",
        }
        if self.settings.actor_memory_mb is not None:
            options["memory"] = self.settings.actor_memory_mb * 1024 * 1024
        self._remote = ray.remote(CheckerHost).options(**options)
        started = [self._spawn() for _ in range(self.settings.actors)]
        results = await asyncio.gather(*started, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            await self.close()
            raise failures[0]

    def _spawn(self) -> asyncio.Future[_Actor]:
        """Create one actor and start its checker in the background; the future fails with
        `backend_error` when it does not start in time."""
        configs = [c.model_dump_json() for c in self.configs.values()]
        self._numbers += 1
        actor = _Actor(number=self._numbers, handle=self._remote.remote(configs, self.catalog_root))
        self.actors.append(actor)
        return asyncio.ensure_future(self._start_actor(actor))

    async def _start_actor(self, actor: _Actor) -> _Actor:
        ray = import_ray()
        try:
            stats = await self._started(actor)
        except (TimeoutError, ray.exceptions.RayError) as error:
            actor.alive = False
            if actor in self.actors:
                self.actors.remove(actor)
            ray.kill(actor.handle)
            self._notify()
            log.error("checker actor %d did not start: %s", actor.number, _cause(error))
            raise LeanIndexError(
                ErrorCode.BACKEND_ERROR, f"checker actor {actor.number} did not start: {_cause(error)}", {"actor": actor.number}
            ) from None
        actor.pid = stats["pid"]
        actor.ready = True
        self._notify()
        return actor

    async def _started(self, actor: _Actor) -> dict[str, Any]:
        """The actor's start answer, within `start_timeout_s`; a warning every
        `STILL_STARTING_S` while it waits, since an actor the cluster cannot place (more CPUs or
        memory asked than a node has) waits without any other sign. Raises
        `asyncio.TimeoutError` past the timeout, `RayError` when the actor fails."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.start_timeout_s
        answer = asyncio.ensure_future(actor.handle.start.remote())
        while True:
            left = deadline - loop.time()
            if left <= 0:
                answer.cancel()
                raise TimeoutError()
            done, _pending = await asyncio.wait({answer}, timeout=min(STILL_STARTING_S, left))
            if done:
                return answer.result()
            log.warning(
                "checker actor %d has not started after %.0f s: is there a node with the CPUs and memory it asks for "
                "(--ray-actor-cpus, --ray-actor-memory-mb)? `ray status` shows pending demands",
                actor.number, self.settings.start_timeout_s - (deadline - loop.time()),
            )

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    def _lost(self, actor: _Actor, error: BaseException) -> None:
        """An actor died under a request: drop it and start a replacement (once per actor)."""
        if not actor.alive:
            return
        actor.alive = False
        self.deaths += 1
        if actor in self.actors:
            self.actors.remove(actor)
        # An actor only unreachable for now would otherwise keep its reservation.
        import_ray().kill(actor.handle)
        log.warning("checker actor %d (pid %s) died: %s; starting a replacement", actor.number, actor.pid, _cause(error))
        if not self._closed:
            replacement = self._spawn()
            replacement.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._notify()

    async def _choose(self, key: str, avoid: list[_Actor]) -> _Actor:
        """The actor for the next request with affinity `key`, never one of `avoid` (see the
        module docstring); waits while actors start. `backend_error` when none is alive."""
        while True:
            if self._closed:
                raise LeanIndexError(ErrorCode.BACKEND_ERROR, "the checker is closed", {})
            live = [a for a in self.actors if a.ready and a.alive and a not in avoid]
            if live:
                least = min(live, key=lambda a: a.in_flight)
                warm = [a for a in live if key in a.warm]
                best_warm = min(warm, key=lambda a: a.in_flight) if warm else None
                near = best_warm is not None and best_warm.in_flight < least.in_flight + max(1, self.repls_per_actor)
                chosen = best_warm if near and best_warm is not None else least
                chosen.remember(key)
                return chosen
            if not any(a.alive and not a.ready for a in self.actors):
                raise LeanIndexError(
                    ErrorCode.BACKEND_ERROR, "no checker actor is alive on the cluster", {"reason": "no_actor", "deaths": self.deaths}
                )
            assert self._changed is not None
            await self._changed.wait()

    async def forward(
        self, method: str, request: BaseModel, response_model: type[ResponseT]
    ) -> tuple[ResponseT | LeanIndexError, int]:
        """Run the operation `method` (a hosted one of `operations.OPERATIONS`) on an actor: (the
        response, read as `response_model`, the operation's, or the error; how many actors ran
        it), applying `on_actor_death` when actors die under it."""
        ray = import_ray()
        key = affinity_key(method, request)
        body = request.model_dump_json()
        died_under: list[_Actor] = []
        while True:
            actor = await self._choose(key, died_under)
            actor.in_flight += 1
            try:
                status, answer = await actor.handle.call.remote(method, body)
            except ray.exceptions.RayActorError as error:
                self._lost(actor, error)
                died_under.append(actor)
                failure = self._after_death(died_under, error)
                if failure is not None:
                    return failure, len(died_under)
                continue
            except ray.exceptions.RayError as error:
                return LeanIndexError(
                    ErrorCode.BACKEND_ERROR, f"checker actor {actor.number} failed: {_cause(error)}", {"actor": actor.number}
                ), len(died_under) + 1
            finally:
                actor.in_flight -= 1
            actor.served += 1
            attempts = len(died_under) + 1
            if status == "ok":
                return response_model.model_validate_json(answer), attempts
            error_body = ErrorBody.model_validate_json(answer)
            return LeanIndexError(ErrorCode(error_body.code), error_body.message, error_body.details), attempts

    def _after_death(self, died_under: list[_Actor], error: BaseException) -> LeanIndexError | None:
        """The answer to a request after the actors in `died_under` died under it, or None to
        retry it on another actor."""
        numbers = [a.number for a in died_under]
        if len(died_under) >= 2:
            return LeanIndexError(
                ErrorCode.BACKEND_ERROR,
                f"this request was in flight on {len(died_under)} checker actors that died ({', '.join(map(str, numbers))}); "
                "it is not retried again (an input that kills its host?)",
                {"reason": "actors_died_twice", "actors": numbers},
            )
        if self.settings.on_actor_death == "backend_error":
            return LeanIndexError(
                ErrorCode.BACKEND_ERROR,
                f"checker actor {numbers[0]} died while running this request: {_cause(error)}",
                {"reason": "actor_died", "actors": numbers},
            )
        return None

    async def perform(self, operation: str, request: BaseModel, *, inspect: Inspect | None = None) -> Any:
        """`Checker.perform` on an actor, one that prepared the same target prefix when it is not
        busier than the others (affinity); raises as it does, and as `forward`. An operation that
        is not `hosted` (proof states live in one REPL; proof steps read this process's catalog)
        is refused with `check_disabled`."""
        if not operation_named(operation).hosted:
            raise LeanIndexError(
                ErrorCode.CHECK_DISABLED,
                "proof states and proof steps live in one REPL and are not served through a Ray cluster; "
                "use a server started with --check and without --ray",
                {},
            )
        outcome, _ = await self.forward(operation, request, operation_named(operation).response_model)
        if isinstance(outcome, LeanIndexError):
            raise outcome
        return outcome

    async def answer(self, item: BatchItem) -> BatchResult:
        """One batch item checked on an actor; its result carries how many actors ran it."""
        outcome, attempts = await self.forward(Check.name, item.request(), CheckResponse)
        return result_of(item.id, outcome, attempts)

    async def actor_stats(self) -> list[dict[str, int]]:
        """`pid` and `rss_bytes` (actor and REPLs) of every live actor."""
        live = [a for a in self.actors if a.ready and a.alive]
        return list(await asyncio.gather(*(a.handle.stats.remote() for a in live)))

    async def close(self) -> None:
        """Stop every actor (its REPLs first), and the Ray connection when `start` opened it."""
        self._closed = True
        self._notify()
        ray = import_ray()
        actors, self.actors = self.actors, []
        closing = [asyncio.wait_for(a.handle.close.remote(), 10) for a in actors if a.ready and a.alive]
        await asyncio.gather(*closing, return_exceptions=True)
        for actor in actors:
            ray.kill(actor.handle)
        if self._owns_connection:
            ray.shutdown()
            self._owns_connection = False


def _cause(error: BaseException) -> str:
    """A one-line account of a Ray failure."""
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]

