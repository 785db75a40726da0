"""The team service's access log: one JSON object per line per tool call (who, which tool, status, time).

The query's text is written only when the operator asked for it (``--log-queries``): a team's questions
can say more than its members would like a log to keep. Tokens and keys are never written.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, TextIO

__all__ = ["AccessLog"]


class AccessLog:
    """Writes access records to ``stream`` (stderr by default), whole lines only, from any thread."""

    def __init__(self, stream: TextIO | None = None, *, log_queries: bool = False) -> None:
        self._stream = stream or sys.stderr
        self.log_queries = log_queries
        self._lock = threading.Lock()

    def write(
        self, *, user: str | None, tool: str, status: int, seconds: float, query: str | None = None
    ) -> None:
        """Log one request; ``query`` is kept only with ``log_queries``."""
        record: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "user": user,
            "tool": tool,
            "status": status,
            "duration_ms": round(seconds * 1000, 1),
        }
        if self.log_queries and query is not None:
            record["query"] = query
        line = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                self._stream.write(line)
                self._stream.flush()
            except (OSError, ValueError):  # a closed or full log must not fail the request
                pass
