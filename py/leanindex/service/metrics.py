"""Prometheus metrics of one HTTP server, in a registry of its own.

Series (names follow Prometheus conventions; durations in seconds):
- `leanindex_http_requests_total{method, route, environment, status}`: requests answered;
- `leanindex_http_request_duration_seconds{method, route, environment}`: latency histogram;
- `leanindex_engine_in_flight`: engine calls holding a slot of the call gate;
- `leanindex_catalog_verified{environment}`: 1 when the profile's catalog last verified against
  its manifest, 0 when it last failed.

`route` is the route template (`/v1/declarations/{name}`), never the raw path, and `environment`
is a profile id that exists under the served root (else `-`), so label sets stay bounded.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ..models import EnvironmentsResponse
from .gate import CallGate

# Latency buckets in seconds: sub-millisecond look-ups up to the default 10 s time budget.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class ServiceMetrics:
    """The metric families of one server; `render()` gives the exposition text."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self, gate: CallGate):
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "leanindex_http_requests",
            "HTTP requests answered, by route template, environment and status.",
            ["method", "route", "environment", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "leanindex_http_request_duration_seconds",
            "HTTP request latency from first byte in to response sent, in seconds.",
            ["method", "route", "environment"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "leanindex_engine_in_flight", "Engine calls holding a slot of the call gate.", registry=self.registry
        )
        self.in_flight.set_function(lambda: gate.in_flight)
        self.verified = Gauge(
            "leanindex_catalog_verified",
            "1 when the profile's catalog last verified against its manifest, 0 when it last failed.",
            ["environment"],
            registry=self.registry,
        )
        # The children of each label set seen (as many as the series themselves: labels are bounded).
        self._series: dict[tuple[str, str, str, int], tuple[Counter, Histogram]] = {}
        self._verified: dict[str, Gauge] = {}

    def observe(self, method: str, route: str, environment: str, status: int, seconds: float) -> None:
        """Count one answered request and record its latency (seconds)."""
        key = (method, route, environment, status)
        series = self._series.get(key)
        if series is None:
            # `labels()` checks and locks on every call; a label set's children are looked up once.
            series = self._series[key] = (self.requests.labels(method, route, environment, str(status)), self.latency.labels(method, route, environment))
        series[0].inc()
        series[1].observe(seconds)

    def set_verified(self, environment: str, verified: bool) -> None:
        """Record the outcome of the latest verification of `environment` (upper-case id)."""
        gauge = self._verified.get(environment)
        if gauge is None:
            gauge = self._verified[environment] = self.verified.labels(environment)
        gauge.set(1 if verified else 0)

    def record_environments(self, response: EnvironmentsResponse) -> None:
        """Record the verification state of every profile listed in `response`."""
        for summary in response.environments:
            self.set_verified(summary.environment, summary.verified)

    def render(self) -> bytes:
        """The Prometheus text exposition of every series."""
        return generate_latest(self.registry)
