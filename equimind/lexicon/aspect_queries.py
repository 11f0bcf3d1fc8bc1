"""The query words of the research's aspect search: per debate aspect (``debate.required.ASPECT_THEMES``), the words
searched for when the evidence the debate reads argues nothing on it (``research/aspects.py``, issue 32).

Source: data, not hand-written. ``data/aspect_queries.json`` is written by ``python -m benchmarks.aspect_queries``
from the hand-labelled filing sentences (``benchmarks/data/claim_sentences.jsonl``): each aspect's top-k words by
the log-odds ratio of its sentences against the rest, k chosen leave-company-out
(``benchmarks/results/aspect_queries.json``). The file states its own provenance; an aspect with too few labelled
sentences has no words and is not searched.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError

PATH = Path(__file__).resolve().parent / "data" / "aspect_queries.json"
FORMAT = 1


@dataclass(frozen=True)
class AspectQueries:
    words: dict[str, tuple[str, ...]]  # debate aspect -> its query words ({} / () when none)
    passages: int  # parents one aspect search adds to what the debate reads
    provenance: dict[str, Any]

    def query(self, aspect: str) -> str | None:
        """The search text of ``aspect``, or None when it has no words."""
        words = self.words.get(aspect, ())
        return " ".join(words) if words else None


def parse(raw: dict[str, Any]) -> AspectQueries:
    if raw.get("format") != FORMAT:
        raise ConfigError(f"aspect query words: format {raw.get('format')!r}, expected {FORMAT}; rebuild it with "
                          "`python -m benchmarks.aspect_queries --words-only`")
    return AspectQueries(words={str(a): tuple(str(w) for w in ws) for a, ws in raw["aspects"].items()},
                         passages=int(raw["passages"]), provenance=dict(raw["provenance"]))


@functools.cache
def load_aspect_queries(path: Path = PATH) -> AspectQueries:
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"aspect query words unreadable at {path}: {exc}; rebuild them with "
                          "`python -m benchmarks.aspect_queries --words-only`") from exc
