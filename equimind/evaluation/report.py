"""Result-file helpers: every benchmark/evaluation JSON carries what is needed to reproduce and compare it.

``result_envelope(config, metrics)`` wraps a run's configuration and metrics with the git commit, a UTC timestamp and
the machine it ran on; ``corpus_signature`` (``security/trace.py``, the one every result's ``trace`` carries)
fingerprints the set of documents a run saw; ``write_json`` writes a result file
atomically (a crash never leaves a half-written file where a previous good one was).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import Any

from equimind.security.trace import corpus_signature as corpus_signature  # re-exported, as every trace uses it

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1

KEY_PACKAGES: tuple[str, ...] = (
    "equimind",
    "numpy",
    "scipy",
    "pandas",
    "torch",
    "sentence-transformers",
    "transformers",
    "chromadb",
    "bm25s",
    "pydantic",
    "pydantic-ai-slim",
    "edgartools",
    "yfinance",
)

_REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def _git(args: Sequence[str], repo: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.debug("git %s failed in %s: %s", " ".join(args), repo, exc)
        return None
    return out.stdout.strip()


def git_sha(repo: Path | None = None) -> str:
    """``git rev-parse HEAD`` in ``repo`` (default: the checkout this package lives in); "unknown" when not a repo."""
    sha = _git(["rev-parse", "HEAD"], repo or _REPO_ROOT)
    return sha if sha else "unknown"


def git_dirty(repo: Path | None = None) -> bool | None:
    """True when tracked files have uncommitted changes (untracked files are ignored: result files and caches would
    otherwise always count); None when it cannot be told (not a repo, no git)."""
    if git_sha(repo) == "unknown":
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], repo or _REPO_ROOT)
    return None if status is None else bool(status)


def package_versions(packages: Iterable[str] = KEY_PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None when it is not installed)."""
    versions: dict[str, str | None] = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _memory_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def machine_info(packages: Iterable[str] = KEY_PACKAGES) -> dict[str, Any]:
    """CPU count (total and usable by this process), memory, platform, Python and key package versions."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "memory_bytes": _memory_bytes(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "packages": package_versions(packages),
    }


def utc_timestamp() -> str:
    """Now in UTC, ISO 8601 with a Z suffix, second precision (e.g. 2026-12-01T09:30:00Z)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def result_envelope(
    config: dict[str, Any],
    metrics: dict[str, Any],
    *,
    corpus: str | None = None,
    repo: Path | None = None,
) -> dict[str, Any]:
    """Wrap a run's config and metrics with provenance.

    ``corpus`` is a :func:`corpus_signature` (recorded as ``corpus_signature``, None when not given); ``repo`` is the
    git checkout to describe (default: the one this package lives in).
    """
    return {
        "schema_version": SCHEMA_VERSION,
        "created_at": utc_timestamp(),
        "git": {"sha": git_sha(repo), "dirty": git_dirty(repo)},
        "corpus_signature": corpus,
        "machine": machine_info(),
        "config": config,
        "metrics": metrics,
    }


def _json_default(obj: Any) -> Any:
    """Encode the non-JSON types results commonly hold: numpy scalars/arrays, dates, enums, paths, dataclasses."""
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy scalar or array
        return obj.tolist()
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if hasattr(obj, "model_dump") and callable(obj.model_dump):  # Pydantic model
        return obj.model_dump(mode="json")
    raise TypeError(f"cannot write {type(obj).__name__} to JSON; convert it to a dict, list, str or number first")


def dumps(obj: Any) -> str:
    """JSON text as :func:`write_json` writes it (indented, sorted keys, NaN/inf refused)."""
    try:
        return json.dumps(obj, indent=2, sort_keys=True, allow_nan=False, default=_json_default) + "\n"
    except ValueError as exc:
        raise ValueError(f"{exc}: a result holds NaN or inf; report an undefined value as None instead") from exc


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (temp file in the same folder, fsync, rename). Returns the path.

    Parent folders are created. If serialisation fails nothing is written and an existing file is left untouched.
    """
    target = Path(path)
    text = dumps(obj)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a result file is meant to be shared
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
