"""Logging of the servers: JSON lines on stderr, never stdout (stdout is the MCP wire)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record: `ts` (UTC, ISO 8601), `level`, `logger`, `message`, the
    record's `fields` dict when given (`extra={"fields": {...}}`, as the access log does), and
    `exc_info` text when an exception is attached."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        line["message"] = record.getMessage()
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record (ours, uvicorn's, the MCP SDK's) to stderr as JSON lines.

    Replaces the root logger's handlers, and makes uvicorn's loggers propagate to it instead of
    using their own handlers.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLinesFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
