"""ParentChildChunker: exact spans, coverage, nesting, no cut in a word or a table row, bounded sizes."""

from __future__ import annotations

import re
from datetime import date
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from equimind.core.documents import Chunk, Document, Origin, PageSpan, Parent, Section, Source
from equimind.core.errors import ConfigError
from equimind.ingest.chunk import ParentChildChunker, cut_points, embedding_text, regions
from equimind.ingest.tokens import WhitespaceTokenizer

WS = WhitespaceTokenizer()


def make_doc(text: str, sections: tuple[Section, ...] = (), pages: tuple[PageSpan, ...] = (),
             filed: date | None = date(2025, 2, 26)) -> Document:
    return Document(id=Document.make_id("test", text), source_key="test", ticker="NVDA", cik=None, company="NVIDIA",
                    source=Source.SEC_EDGAR, origin=Origin.SNAPSHOT, form="10-K", filed_at=filed, period_end=None,
                    url=None, title="NVIDIA 10-K", text=text, sections=sections, pages=pages)


# ----------------------------------------------------------------------------------------------- synthetic docs

words = st.text(alphabet="abcdefghij", min_size=1, max_size=7)
sentence = st.lists(words, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
table_row = st.lists(st.text(alphabet="0123456789$,", min_size=0, max_size=6), min_size=1, max_size=5).map(
    lambda cells: "| " + " | ".join(cells) + " |")
table = st.lists(table_row, min_size=1, max_size=6).map("\n".join)
block = st.one_of(paragraph, paragraph, table)
section_body = st.lists(block, min_size=1, max_size=6).map("\n\n".join)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    bodies = draw(st.lists(section_body, min_size=1, max_size=4))
    parts: list[str] = []
    sections: list[Section] = []
    pos = 0
    for i, body in enumerate(bodies):
        chunk = ("\n\n" if i else "") + f"Item {i + 1}. Title\n\n{body}"
        parts.append(chunk)
        sections.append(Section(f"Item {i + 1}", pos, pos + len(chunk)))
        pos += len(chunk)
    return make_doc("".join(parts), tuple(sections))


def table_lines(text: str) -> list[tuple[int, int]]:
    """[start, end) of every line whose first non-blank character is '|'."""
    out = []
    for m in re.finditer(r"[^\n]+", text):
        if m.group().lstrip().startswith("|"):
            out.append(m.span())
    return out


def is_single_atom(text: str) -> bool:
    """One word, or one table row: the only chunks allowed to exceed their budget."""
    return len(text.split()) == 1 or ("\n" not in text and text.lstrip().startswith("|"))


def check_invariants(doc: Document, parents: list[Parent], children: list[Chunk], child_budget: int,
                     parent_budget: int) -> None:
    text = doc.text
    by_id = {p.id: p for p in parents}
    assert len(by_id) == len(parents), "parent ids are unique"
    assert len({c.id for c in children}) == len(children), "chunk ids are unique"
    assert not set(by_id) & {c.id for c in children}, "parent and chunk ids differ"
    spans = sorted((p.start, p.end) for p in parents)
    assert all(a[1] <= b[0] for a, b in pairwise(spans)), "parents do not overlap"
    covered = [0] * len(text)
    rows = table_lines(text)
    for c in children:
        assert text[c.start:c.end] == c.text and c.text.strip() == c.text and c.text
        parent = by_id[c.parent_id]
        assert (parent.start, parent.end) == (c.parent_start, c.parent_end)
        assert parent.start <= c.start < c.end <= parent.end
        assert parent.section == c.section
        for i in range(c.start, c.end):
            covered[i] += 1
        # never inside a word
        assert c.start == 0 or text[c.start - 1].isspace()
        assert c.end == len(text) or text[c.end].isspace()
        # never inside a table row
        for rs, re_ in rows:
            assert not rs < c.start < re_ or not text[rs:c.start].strip()
            assert not rs < c.end < re_ or not text[c.end:re_].strip()
        if WS.count(c.text) > child_budget:
            assert is_single_atom(c.text), c.text
    for p in parents:
        body = text[p.start:p.end]
        if WS.count(body) > parent_budget:
            assert is_single_atom(body), body
    for sec in doc.sections:
        inside = [c for c in children if sec.start <= c.start < sec.end]
        assert all(c.end <= sec.end and c.section == sec.name for c in inside), "chunks never cross sections"
        for i in range(sec.start, sec.end):
            if not text[i].isspace():
                assert covered[i] == 1, f"char {i} {text[i]!r} covered {covered[i]} times"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), child=st.integers(1, 25), extra=st.integers(0, 60))
def test_properties_hold_on_synthetic_documents(doc: Document, child: int, extra: int) -> None:
    parents, children = ParentChildChunker(WS, child_tokens=child, parent_tokens=child + extra).chunk(doc)
    check_invariants(doc, parents, children, child, child + extra)


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab .|\n\t")), max_size=300), child=st.integers(1, 8))
def test_properties_hold_on_arbitrary_text_without_sections(text: str, child: int) -> None:
    doc = make_doc(text)
    _, children = ParentChildChunker(WS, child_tokens=child, parent_tokens=child * 3).chunk(doc)
    covered = sorted((c.start, c.end) for c in children)
    assert all(a[1] <= b[0] for a, b in pairwise(covered)), "children do not overlap"
    assert "".join("".join(text[s:e].split()) for s, e in covered) == "".join(text.split())
    assert all(c.section is None for c in children)


# ----------------------------------------------------------------------------------------------- behaviour


def test_prefers_paragraph_then_sentence_boundaries() -> None:
    text = "one two three four five six.\n\nseven eight nine ten eleven twelve."
    _, children = ParentChildChunker(WS, child_tokens=10, parent_tokens=20).chunk(make_doc(text))
    assert [c.text for c in children] == ["one two three four five six.", "seven eight nine ten eleven twelve."]
    text = "Aa bb cc dd. Ee ff gg hh ii jj kk ll"
    _, children = ParentChildChunker(WS, child_tokens=9, parent_tokens=20, min_fill=0.4).chunk(make_doc(text))
    assert children[0].text == "Aa bb cc dd."


def test_table_rows_are_never_split_and_long_rows_stay_whole() -> None:
    row = "| " + " | ".join(f"c{i}" for i in range(12)) + " |"
    text = f"Intro words here.\n\n{row}\n{row}\n\nTail."
    _, children = ParentChildChunker(WS, child_tokens=5, parent_tokens=5).chunk(make_doc(text))
    assert row in [c.text for c in children]
    assert all(c.text == row or "|" not in c.text for c in children)


def test_overlong_word_is_kept_whole() -> None:
    word = "x" * 50
    _, children = ParentChildChunker(WS, child_tokens=1, parent_tokens=1).chunk(make_doc(f"a {word} b"))
    assert [c.text for c in children] == ["a", word, "b"]


def test_no_tiny_tail_when_the_rest_fits_in_two_chunks() -> None:
    text = " ".join(f"w{i}" for i in range(11))
    _, children = ParentChildChunker(WS, child_tokens=10, parent_tokens=10).chunk(make_doc(text))
    assert sorted(WS.count(c.text) for c in children) == [5, 6]


def test_chunk_metadata_pages_and_stable_ids() -> None:
    text = "alpha beta gamma\n\ndelta epsilon\n\nzeta eta theta"
    pages = (PageSpan(0, 0, 16), PageSpan(1, 18, 31), PageSpan(2, 33, len(text)))
    doc = make_doc(text, (Section("Item 7. MD&A", 0, len(text)),), pages)
    chunker = ParentChildChunker(WS, child_tokens=3, parent_tokens=6)
    parents, children = chunker.chunk(doc)
    assert [(c.page_start, c.page_end) for c in children] == [(0, 0), (1, 1), (2, 2)]
    assert len(parents) == 2 and children[0].parent_id == children[1].parent_id != children[2].parent_id
    c = children[0]
    assert (c.ticker, c.source, c.form, c.filed_at, c.section) == ("NVDA", Source.SEC_EDGAR, "10-K", 20250226,
                                                                    "Item 7. MD&A")
    assert c.id == Chunk.make_id(doc.id, c.start, c.end)
    assert chunker.chunk(doc) == (parents, children), "deterministic: a re-run yields the same ids"
    _, undated = chunker.chunk(make_doc(text, filed=None))
    assert undated[0].filed_at == 0 and undated[0].page_start is None


def test_uncovered_gaps_between_sections_are_still_chunked() -> None:
    text = "aa bb\n\ncc dd\n\nee ff"
    doc = make_doc(text, (Section("S", 7, 12),))
    _, children = ParentChildChunker(WS, child_tokens=10, parent_tokens=10).chunk(doc)
    assert [(c.text, c.section) for c in children] == [("aa bb", None), ("cc dd", "S"), ("ee ff", None)]


def test_cut_points_skip_table_row_interiors() -> None:
    text = "a b\n| x | y |\nc"
    pos, _ = cut_points(text, 0, len(text))
    assert pos == [1, 3, 13, 15]


@pytest.mark.parametrize(("child", "parent"), [(0, 10), (-1, 10), (10, 5), (10, 0)])
def test_invalid_settings_raise_config_error(child: int, parent: int) -> None:
    with pytest.raises(ConfigError, match="tokens"):
        ParentChildChunker(WS, child_tokens=child, parent_tokens=parent)


def test_embedding_text_prefixes_title_and_section_but_keeps_the_span() -> None:
    doc = make_doc("Revenue grew 114%.", (Section("Item 7. MD&A", 0, 18),))
    _, children = ParentChildChunker(WS).chunk(doc)
    assert children[0].text == "Revenue grew 114%."
    assert embedding_text(children[0], doc.title) == "NVIDIA 10-K | Item 7. MD&A\nRevenue grew 114%."
    assert embedding_text(children[0], "") == "Item 7. MD&A\nRevenue grew 114%."


# ----------------------------------------------------------------------------------------------- real filing


@pytest.mark.integration
def test_real_filing_chunks_fast_with_the_embedder_tokenizer(corpus_dir: Path) -> None:
    from equimind.ingest.documents import to_document
    from equimind.ingest.tokens import HFTokenizer
    from equimind.sources.snapshot import SnapshotFilingsSource

    source = SnapshotFilingsSource(corpus_dir)
    entry = source.list_entries(tickers=["NVDA"], forms=["10-K"])[0]
    doc = to_document(source.load(entry))
    tok = HFTokenizer.from_model_dir()
    tokenised: list[int] = []  # characters per tokenizer call

    class CountingTokenizer:
        """The real tokenizer, counting what the chunker hands it (its time is measured by benchmarks/parse_chunk)."""

        def __getattr__(self, name: str) -> object:
            return getattr(tok, name)

        def token_spans(self, text: str) -> list[tuple[int, int]]:
            tokenised.append(len(text))
            return tok.token_spans(text)

    chunker = ParentChildChunker(CountingTokenizer(), child_tokens=200, parent_tokens=800)
    parents, children = chunker.chunk(doc)
    # fast = linear: each region of the filing is tokenised once, never re-tokenised per candidate chunk
    assert len(tokenised) == len(regions(doc)) > 1 and sum(tokenised) <= len(doc.text), \
        (len(tokenised), len(regions(doc)), sum(tokenised), len(doc.text))
    assert 200 < len(children) < 2000 and len(parents) < len(children)
    for c in children:
        assert doc.text[c.start:c.end] == c.text
        assert tok.count(c.text) <= 200 or is_single_atom(c.text)
    section_of = {c.section for c in children}
    assert any(s and s.startswith("Item 1A") for s in section_of)
    assert any(c.text.startswith("| ") for c in children), "some children are table rows"
