"""``equimind models pull``: download a model repository from the Hugging Face Hub into EQUIMIND_HOME/models.

``huggingface_hub`` does all the HTTP (it reads its own variables: ``HF_ENDPOINT``, ``HF_HUB_OFFLINE``, ``HF_TOKEN``,
the proxy variables, ``HF_HUB_DISABLE_PROGRESS_BARS``) and draws the tqdm progress bars. EquiMind resolves the revision
to a commit, downloads the snapshot of that commit into a fresh ``models/.partial-<org>--<name>-<id>/`` folder (its
own Hugging Face cache inside it, so nothing is written outside EQUIMIND_HOME), checks every file against the tree
listing's sizes, hashes every file, writes the manifest last, and only then renames the folder into place. An
interrupted or failed pull leaves no model folder; its partial folder is removed on failure, and a later pull removes
any partial folder a killed process left behind. Nothing here runs unless a user asks for a pull.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from equimind.core.errors import EquiMindError, NotFoundError, SourceError
from equimind.embedding.hub import (
    MANIFEST_NAME,
    PARTIAL_PREFIX,
    Manifest,
    check_repo_id,
    folder_name,
    model_dir,
    record_files,
)

log = logging.getLogger(__name__)

_HF_INTERNAL = ".cache"  # huggingface_hub's local_dir metadata folder (not part of the model)


@dataclass(frozen=True)
class PullResult:
    folder: Path
    manifest: Manifest
    replaced: bool  # an earlier pull of the same model was swapped out
    removed_partials: tuple[Path, ...]  # leftovers of interrupted pulls that were cleaned up


def hub_endpoint() -> str:
    """The endpoint huggingface_hub will use (HF_ENDPOINT, read by huggingface_hub itself)."""
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def pull(models_path: Path, repo_id: str, revision: str | None = None) -> PullResult:
    """Download ``repo_id`` at ``revision`` (default: the repo's main branch) into ``models_path``."""
    rid = check_repo_id(repo_id)
    endpoint = hub_endpoint()
    models_path.mkdir(parents=True, exist_ok=True)
    removed = _remove_partials(models_path, rid)
    staging = models_path / f"{PARTIAL_PREFIX}{folder_name(rid)}-{uuid.uuid4().hex[:8]}"
    try:
        commit = _resolve_commit(rid, revision, endpoint)
        files = staging / "files"
        sizes = _download(rid, commit, files, staging / "hf-cache", endpoint)
        shutil.rmtree(files / _HF_INTERNAL, ignore_errors=True)
        records = record_files(files)
        _check_complete(rid, endpoint, records, sizes)
        manifest = Manifest(rid, revision or "main", commit, endpoint,
                            datetime.now(UTC).isoformat(timespec="seconds"), records)
        (files / MANIFEST_NAME).write_text(manifest.to_json(), encoding="utf-8")  # written last
        final = model_dir(models_path, rid)
        replaced = _swap_into_place(files, final, staging)
        return PullResult(final, manifest, replaced, removed)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_partials(models_path: Path, rid: str) -> tuple[Path, ...]:
    left = tuple(sorted(models_path.glob(f"{PARTIAL_PREFIX}{folder_name(rid)}-*")))
    for p in left:
        log.info("removing the leftover of an interrupted pull: %s", p)
        shutil.rmtree(p, ignore_errors=True)
    return left


def _resolve_commit(rid: str, revision: str | None, endpoint: str) -> str:
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(rid, revision=revision or "main")
    except Exception as exc:
        raise translate(exc, rid, revision, endpoint) from exc
    if not info.sha:
        raise SourceError(f"{endpoint} answered for model {rid} without a commit sha; it does not look like a "
                          "Hugging Face Hub endpoint — check HF_ENDPOINT")
    return str(info.sha)


def _download(rid: str, commit: str, files: Path, cache: Path, endpoint: str) -> dict[str, int]:
    """snapshot_download of one commit into ``files``; returns the tree listing's size of every file."""
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.hf_api import RepoFile

    try:
        listing = {f.path: int(f.size) for f in HfApi().list_repo_tree(rid, revision=commit, recursive=True)
                   if isinstance(f, RepoFile)}
        snapshot_download(rid, revision=commit, local_dir=files, cache_dir=cache)
    except Exception as exc:
        raise translate(exc, rid, commit, endpoint) from exc
    return listing


def _check_complete(rid: str, endpoint: str, records: Any, sizes: dict[str, int]) -> None:
    got = {r.path: r.size for r in records}
    wrong = [f"{p} ({got.get(p, 'missing')} of {n} bytes)" for p, n in sizes.items() if got.get(p) != n]
    if wrong:
        raise SourceError(f"the download of model {rid} from {endpoint} is incomplete: {', '.join(wrong)}; nothing "
                          f"was installed — run `equimind models pull {rid}` again")
    if not got:
        raise NotFoundError(f"model {rid} at {endpoint} has no files; check the name")


def _swap_into_place(files: Path, final: Path, staging: Path) -> bool:
    """Rename the complete folder into place; an older pull is moved aside first and deleted after."""
    if not final.exists():
        os.replace(files, final)
        return False
    old = staging / "previous"
    os.replace(final, old)
    os.replace(files, final)
    return True


def translate(exc: BaseException, rid: str, revision: str | None, endpoint: str) -> EquiMindError:
    """A huggingface_hub / httpx failure as an EquiMind error naming the model, the endpoint and the fix."""
    import httpx2
    from huggingface_hub import errors as hf

    rev = f" (revision {revision})" if revision else ""
    again = f"run `equimind models pull {rid}` again"
    if isinstance(exc, EquiMindError):
        return exc
    if isinstance(exc, hf.RevisionNotFoundError):
        return NotFoundError(f"model {rid} has no revision {revision!r} at {endpoint} (HTTP 404); pass an existing "
                             "branch, tag or commit with --revision, or leave it out for the main branch")
    if isinstance(exc, hf.RepositoryNotFoundError | hf.GatedRepoError):
        status = exc.response.status_code if exc.response is not None else "?"
        return NotFoundError(f"model {rid} was not found at {endpoint} (HTTP {status}); check the name (e.g. "
                             "cross-encoder/ms-marco-MiniLM-L6-v2) — a private or gated model also needs a token "
                             "(HF_TOKEN or `hf auth login`)")
    if isinstance(exc, hf.OfflineModeIsEnabled) or _offline():
        return SourceError(f"cannot pull model {rid}{rev} from {endpoint}: HF_HUB_OFFLINE is set, so huggingface_hub "
                           "makes no requests; unset HF_HUB_OFFLINE (or set it to 0) and run the pull again")
    if isinstance(exc, httpx2.ConnectError | httpx2.TimeoutException | httpx2.ProxyError):
        return SourceError(f"cannot reach {endpoint} to pull model {rid}{rev} ({type(exc).__name__}: {exc}); check "
                           "the network, the proxy variables (HTTPS_PROXY) or HF_ENDPOINT, then " + again)
    if isinstance(exc, hf.HfHubHTTPError):
        return SourceError(f"{endpoint} refused the pull of model {rid}{rev} ({str(exc).splitlines()[0]}); " + again)
    if isinstance(exc, OSError | httpx2.HTTPError):
        return SourceError(f"the download of model {rid}{rev} from {endpoint} was interrupted ({type(exc).__name__}: "
                           f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); nothing was installed — "
                           + again)
    return SourceError(f"pull of model {rid}{rev} from {endpoint} failed ({type(exc).__name__}: {exc}); " + again)


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())
