"""Shared plumbing of the on-disk search indexes (BM25 and the exact-search vector matrix).

* ``RowMeta``: per-row filter metadata as numpy code arrays, and ``FilterSpec`` -> boolean row mask with exactly the
  semantics of ``FilterSpec.matches`` (so both retrieval legs filter inside the index, not after the top-k).
* Versioned, atomically replaced index directories: an index is written into a fresh ``v-<uuid>`` directory, then the
  one-line ``CURRENT`` pointer file is swapped with ``os.replace`` (atomic on POSIX and Windows), so a reader sees
  either the old complete index or the new complete index, never a half-written one. The previous version is kept
  until the next save so a reader that resolved it just before a swap can still finish loading; a reader whose
  version was removed under it anyway (two saves during its load) retries on the new one (``read_versioned``).
  Several writers (the ingest, and serving processes rebuilding stale indexes) may save into the same root at once:
  each writes its own ``.tmp-<pid>-*`` directory and the swap + clean-up run under a file lock.

Everything is JSON or ``.npy`` (loaded with ``allow_pickle=False``): inspectable, never pickles.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from equimind.core.documents import Chunk, FilterSpec, date_to_int
from equimind.core.errors import ConfigError

log = logging.getLogger(__name__)

CURRENT = "CURRENT"
FORMAT_FILE = "format.json"
Mask = npt.NDArray[np.bool_]
T = TypeVar("T")
IntArray = npt.NDArray[np.int32]


class IndexFormatError(ConfigError):
    """An index on disk is missing, unreadable or written by another format version: rebuild it."""


def _codes(values: Sequence[str]) -> tuple[list[str], IntArray]:
    vocab = sorted(set(values))
    pos = {v: i for i, v in enumerate(vocab)}
    return vocab, np.fromiter((pos[v] for v in values), dtype=np.int32, count=len(values))


@dataclass(frozen=True)
class RowMeta:
    """Filter metadata of each index row (row i = ``ids[i]``), dictionary-encoded as int32 codes."""

    ids: tuple[str, ...]
    vocab: dict[str, list[str]]  # column -> code -> value
    codes: dict[str, IntArray]  # column -> per-row codes
    filed_at: IntArray  # YYYYMMDD, 0 when unknown

    COLUMNS = ("ticker", "source", "form", "doc_id")

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk]) -> RowMeta:
        columns = {
            "ticker": [c.ticker or "" for c in chunks],
            "source": [c.source.value for c in chunks],
            "form": [c.form for c in chunks],
            "doc_id": [c.doc_id for c in chunks],
        }
        vocab: dict[str, list[str]] = {}
        codes: dict[str, IntArray] = {}
        for name, values in columns.items():
            vocab[name], codes[name] = _codes(values)
        filed = np.fromiter((c.filed_at for c in chunks), dtype=np.int32, count=len(chunks))
        return cls(ids=tuple(c.id for c in chunks), vocab=vocab, codes=codes, filed_at=filed)

    def __len__(self) -> int:
        return len(self.ids)

    def _among(self, column: str, wanted: Sequence[str]) -> Mask:
        vocab = self.vocab[column]
        want = set(wanted)
        hit = [i for i, v in enumerate(vocab) if v in want]
        return np.isin(self.codes[column], np.asarray(hit, dtype=np.int32))

    def mask(self, flt: FilterSpec | None) -> Mask | None:
        """Boolean mask of the rows ``flt`` admits; None when the filter is empty (every row admitted)."""
        if flt is None or flt.is_empty():
            return None
        m = np.ones(len(self.ids), dtype=np.bool_)
        if flt.tickers:
            m &= self._among("ticker", flt.tickers)
        if flt.sources:
            m &= self._among("source", [s.value for s in flt.sources])
        if flt.forms:
            m &= self._among("form", flt.forms)
        if flt.doc_ids:
            m &= self._among("doc_id", flt.doc_ids)
        if flt.since:
            m &= self.filed_at >= date_to_int(flt.since)
        if flt.until:
            m &= self.filed_at <= date_to_int(flt.until)
        return m

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "ids.npy", np.asarray(self.ids, dtype=np.str_), allow_pickle=False)
        np.save(directory / "filed_at.npy", self.filed_at, allow_pickle=False)
        for name in self.COLUMNS:
            np.save(directory / f"{name}.npy", self.codes[name], allow_pickle=False)
        (directory / "vocab.json").write_text(json.dumps(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> RowMeta:
        ids = np.load(directory / "ids.npy", allow_pickle=False)
        vocab = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
        codes = {n: np.load(directory / f"{n}.npy", allow_pickle=False) for n in cls.COLUMNS}
        filed = np.load(directory / "filed_at.npy", allow_pickle=False)
        return cls(ids=tuple(str(x) for x in ids.tolist()), vocab=vocab, codes=codes, filed_at=filed)


# ------------------------------------------------------------------------------------------ versioned directories


def write_versioned(root: Path, kind: str, version: int, info: dict[str, Any], write: Callable[[Path], None]) -> Path:
    """Write an index atomically under ``root``; returns the new version directory.

    Safe with concurrent writers (threads or processes): each writes into its own ``.tmp-<pid>-...`` directory,
    and the rename + ``CURRENT`` swap + clean-up run under an exclusive lock on ``root/.lock``, so no writer removes
    another's directory between its rename and its swap."""
    root.mkdir(parents=True, exist_ok=True)
    name = f"v-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    tmp = root / f".tmp-{os.getpid()}-{name}"
    try:
        write(tmp)
        stamp = {"kind": kind, "format_version": version, "created_at": datetime.now(UTC).isoformat(), **info}
        (tmp / FORMAT_FILE).write_text(json.dumps(stamp, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    final = root / name
    with _locked(root):
        os.replace(tmp, final)
        pointer = root / f".{CURRENT}.{uuid.uuid4().hex[:8]}"
        pointer.write_text(name + "\n", encoding="utf-8")
        previous = _current_name(root)
        os.replace(pointer, root / CURRENT)
        _cleanup(root, keep={name, previous})
    return final


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Exclusive advisory lock on ``root/.lock`` (flock: between processes and between threads, each of which opens
    the file itself). Without fcntl (Windows) writers are not serialised."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(root / ".lock", "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def has_current(root: Path) -> bool:
    return _current_name(root) is not None


def fingerprint(chunk_ids: Iterable[str]) -> str:
    """Order-independent identity of a set of chunk ids (ids are content hashes, so this identifies the content)."""
    h = hashlib.sha256()
    for cid in sorted(chunk_ids):
        h.update(cid.encode())
        h.update(b"\n")
    return h.hexdigest()


def _current_name(root: Path) -> str | None:
    try:
        return (root / CURRENT).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def _cleanup(root: Path, keep: set[str | None]) -> None:
    """Remove superseded versions and the temporary directories of writers that are gone (crashed or killed); a
    ``.tmp-<pid>-...`` directory of a live process is another writer at work and is left alone."""
    for child in root.iterdir():
        if not child.is_dir() or child.name in keep:
            continue
        if child.name.startswith("v-") or (child.name.startswith(".tmp-") and not _writer_alive(child.name)):
            shutil.rmtree(child, ignore_errors=True)


def _writer_alive(tmp_name: str) -> bool:
    pid = tmp_name.split("-")[1]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def open_versioned(root: Path, kind: str, version: int) -> tuple[Path, dict[str, Any]]:
    """Resolve the current version directory of an index and check its format stamp."""
    name = _current_name(root)
    if name is None:
        raise IndexFormatError(f"no {kind} index at {root}; build it (ingest documents, or run a reindex)")
    directory = root / name
    try:
        stamp: dict[str, Any] = json.loads((directory / FORMAT_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise IndexFormatError(f"{kind} index at {directory} is unreadable ({exc}); delete {root} and reindex") from exc
    if stamp.get("kind") != kind or stamp.get("format_version") != version:
        raise IndexFormatError(
            f"{kind} index at {directory} has format {stamp.get('kind')!r} v{stamp.get('format_version')}, "
            f"this EquiMind reads {kind!r} v{version}; reindex (delete {root} and rebuild it from the docstore)"
        )
    return directory, stamp


def read_versioned(root: Path, kind: str, version: int, read: Callable[[Path, dict[str, Any]], T],
                   attempts: int = 5) -> T:
    """``read(directory, stamp)`` of the current version. A version superseded and removed by a concurrent writer
    while it was being read is retried on the new current one; anything else unreadable is an IndexFormatError."""
    for attempt in range(1, attempts + 1):
        name = _current_name(root)
        try:
            directory, stamp = open_versioned(root, kind, version)
            return read(directory, stamp)
        except (OSError, ValueError, KeyError, ConfigError) as exc:
            superseded = name is not None and _current_name(root) != name and not (root / name).is_dir()
            if superseded and attempt < attempts:
                log.debug("%s index version %s was replaced while being read; retrying", kind, name)
                continue
            if isinstance(exc, IndexFormatError):
                raise
            raise IndexFormatError(f"{kind} index at {root / str(name)} is unreadable ({exc}); delete {root} and "
                                   "reindex") from exc
    raise AssertionError("unreachable")  # pragma: no cover
