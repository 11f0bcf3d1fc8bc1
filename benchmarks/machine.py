"""Machine description stamped into every benchmark result (so numbers are never read without their context)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

DEFAULT_PACKAGES = (
    "numpy", "scipy", "chromadb", "bm25s", "PyStemmer", "torch", "sentence-transformers", "transformers",
    "pydantic", "equimind",
)


def _versions(packages: tuple[str, ...]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        return None
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def machine_info(packages: tuple[str, ...] = DEFAULT_PACKAGES) -> dict[str, Any]:
    """CPU count and model, memory, OS, Python, package versions, git commit and the UTC date."""
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": _memory_gb(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "packages": _versions(packages),
        "git_commit": _git_commit(),
        "ci": bool(os.environ.get("CI")),
    }
