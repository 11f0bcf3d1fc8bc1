"""Versioned prompt files (``equimind/llm/prompts/*.md``, packaged) and their hashes.

Each file starts with a front matter block (``---`` / ``name: ...`` / ``version: ...`` / ``---``). The sha256 of the
whole file is what a Recommendation records, so any edit to a prompt shows up in its output.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

from equimind.core.errors import NotFoundError, ParseError

PROMPT_NAMES = ("bull", "bear", "judge")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    text: str
    sha256: str

    @property
    def key(self) -> str:
        return f"{self.name}@v{self.version}"


def parse_prompt(raw: str, *, source: str) -> Prompt:
    lines = raw.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ParseError(f"{source}: a prompt file must start with a '---' front matter block")
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ParseError(f"{source}: front matter is not closed with '---'") from None
    meta: dict[str, str] = {}
    for line in lines[1:close]:
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    if not meta.get("name") or not meta.get("version"):
        raise ParseError(f"{source}: front matter needs 'name' and 'version'")
    body = "\n".join(lines[close + 1:]).strip()
    if not body:
        raise ParseError(f"{source}: the prompt body is empty")
    return Prompt(name=meta["name"], version=meta["version"], text=body,
                  sha256=hashlib.sha256(raw.encode("utf-8")).hexdigest())


def load_prompt(name: str) -> Prompt:
    """The packaged prompt ``name`` (bull, bear, judge)."""
    res = resources.files("equimind.llm").joinpath("prompts", f"{name}.md")
    if not res.is_file():
        raise NotFoundError(f"prompt {name!r} is not packaged; valid: {', '.join(PROMPT_NAMES)}")
    return parse_prompt(res.read_text(encoding="utf-8"), source=f"prompts/{name}.md")


def load_prompts() -> dict[str, Prompt]:
    return {name: load_prompt(name) for name in PROMPT_NAMES}
