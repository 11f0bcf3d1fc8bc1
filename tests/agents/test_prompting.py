"""Versioned, packaged prompt files and their hashes."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from equimind.core.errors import NotFoundError, ParseError
from equimind.llm.prompting import PROMPT_NAMES, load_prompt, load_prompts, parse_prompt


def test_packaged_prompts_have_front_matter_and_file_hashes() -> None:
    prompts = load_prompts()
    assert set(prompts) == set(PROMPT_NAMES)
    for name, p in prompts.items():
        raw = resources.files("equimind.llm").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8")
        assert p.name == name and p.version == "1" and p.key == f"{name}@v1"
        assert p.sha256 == hashlib.sha256(raw.encode()).hexdigest()
        assert not p.text.startswith("---") and "DATA" in p.text  # evidence is framed as data, not instructions


def test_any_edit_changes_the_hash() -> None:
    a = parse_prompt("---\nname: x\nversion: 2\n---\nBody.", source="t")
    b = parse_prompt("---\nname: x\nversion: 2\n---\nBody!", source="t")
    assert a.version == "2" and a.sha256 != b.sha256


@pytest.mark.parametrize("raw, msg", [("Body only", "must start"), ("---\nname: x\nBody", "not closed"),
                                      ("---\nname: x\n---\nBody", "needs 'name' and 'version'"),
                                      ("---\nname: x\nversion: 1\n---\n  ", "empty")])
def test_malformed_prompt_files(raw: str, msg: str) -> None:
    with pytest.raises(ParseError, match=msg):
        parse_prompt(raw, source="t")


def test_unknown_prompt() -> None:
    with pytest.raises(NotFoundError, match="valid: bull, bear, judge"):
        load_prompt("critic")
