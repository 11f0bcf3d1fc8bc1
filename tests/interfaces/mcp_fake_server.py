"""Runs the real EquiMind MCP stdio server (``run_stdio``) over the fake-model services, for test_mcp.

Settings come from the environment (EQUIMIND_HOME, EQUIMIND_SNAPSHOT, EQUIMIND_AUDIT_KEY), as ``equimind mcp`` does;
only the embedder, reranker and tokenizer are the test fakes (the store was indexed with the hash embedder).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from interfaces_fakes import fake_services

from equimind.core.config import Settings
from equimind.core.errors import EquiMindError
from equimind.interfaces.mcp_server import run_stdio


def main() -> None:
    settings = Settings()
    try:
        run_stdio(settings, fake_services(settings))
    except EquiMindError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from exc


if __name__ == "__main__":
    main()
