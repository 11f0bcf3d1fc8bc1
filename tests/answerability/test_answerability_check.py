"""The answerability rule (ADR 0006) on hand-made documents, and the check over a real SQLite docstore."""

from __future__ import annotations

from datetime import date
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from equimind.answer.answerability import AnswerabilityCheck, judge
from equimind.answer.term_index import DocTerms, scope_stats
from equimind.core.documents import Chunk, Document, Origin, Parent, Source
from equimind.query.analysis import Subject, analyse, name_words, stem_sets
from equimind.query.parsed import QuestionParser
from equimind.store.docstore import DocStore

STEM = Stemmer.Stemmer("english")
ACME = Subject("ACME", name_words("ACME", "Acme Corp"))
PASSAGES = [
    "Acme sold 1.2 million widgets to customers in Germany during fiscal 2024.",
    "Revenue from widgets grew 12% while the data center segment revenue was flat.",
    "Risk factors: competition, supply constraints and export controls.",
]


def _doc_terms(passages: list[str], doc_id: str = "d1", form: str = "10-K") -> DocTerms:
    spans = []
    at = 0
    for p in passages:
        spans.append((at, at + len(p)))
        at += len(p) + 1
    sets = tuple(stem_sets(passages, STEM))
    seq = [str(w) for w in STEM.stemWords(" ".join(passages).lower().replace(".", " ").split())]
    return DocTerms(doc_id, form, tuple(spans), sets, frozenset().union(*sets), frozenset(pairwise(seq)))


def _verdict(question: str, passages: list[str] = PASSAGES):  # type: ignore[no-untyped-def]
    a = analyse(question, ACME, [], STEM)
    return judge(a, scope_stats([_doc_terms(passages)], [t.stem for t in a.terms], a.names), ["ACME"])


def test_a_multi_word_name_must_be_written_together() -> None:
    passages = [*PASSAGES, "Acme Widgets Holdings is a subsidiary; Germany, data and Holdings appear apart too."]
    named = _verdict("What did ACME pay for Acme Widgets Holdings?", passages)
    assert named.analysis.names and named.analysis.names[0].text == "widgets holdings"
    assert named.answerable
    apart = _verdict("How many widgets were sold to Germany Holdings?", passages)
    assert [n.text for n in apart.analysis.names] == ["germany holdings"]
    assert not apart.answerable and apart.rule == "(a) the name 'germany holdings' is written in no visible document"
    assert "the name 'germany holdings' is written in none of the 1 documents" in (apart.reason or "")


def test_answerable_specific_ask() -> None:
    v = _verdict("How many widgets were sold to customers in Germany in 2024?")
    assert v.answerable and v.missing == () and v.reason is None
    assert v.best is not None and v.best.doc_id == "d1" and v.best.start == 0


def test_rule_a_missing_proper_noun_refuses() -> None:
    v = _verdict("How many widgets were sold to customers in Brazil?")
    assert not v.answerable and v.rule.startswith("(a)")
    assert [t.word for t in v.missing] == ["brazil"]
    assert "'brazil' occurs in none of the 1 documents visible for ACME (1 10-K; 3 passages searched)" in v.reason


def test_rule_b_two_missing_common_words_refuse_one_does_not() -> None:
    two = _verdict("How much widgets revenue came from electric scooter customers?")
    assert not two.answerable and two.rule.startswith("(b)")
    assert {t.word for t in two.missing} == {"electric", "scooter"}
    one = _verdict("How much did widgets revenue climb?")  # "climb" is a paraphrase of "grew": one word alone
    assert one.answerable and [t.word for t in one.missing] == ["climb"]


def test_rule_c_terms_scattered_over_passages_refuse() -> None:
    # each term exists somewhere, but no passage holds half of them, and one term is missing
    v = _verdict("Did widgets competition constraints customers revenue affect Acme's toasters?")
    assert not v.answerable and v.rule.startswith("(c)")


def test_missing_acronym_counts_for_no_rule() -> None:
    v = _verdict("What was Acme's EBITDA from widgets revenue?")
    assert v.answerable and v.doc_freq["ebitda"] == 0 and v.missing == ()


def test_decision_ask_is_answerable_without_looking() -> None:
    v = _verdict("Should I buy Acme?", [])
    assert v.answerable and v.analysis.terms == () and "decision" in v.rule


def test_no_documents_at_all_refuses_and_says_only_market_data() -> None:
    a = analyse("What were Acme's toaster revenues?", ACME, [], STEM)
    v = judge(a, scope_stats([_doc_terms(["close 101.2 volume 3000"], form="prices")], [t.stem for t in a.terms]),
              ["ACME"])
    assert not v.answerable and "no filing of ACME" in (v.reason or "")


@settings(max_examples=80, deadline=None)
@given(extra=st.lists(st.sampled_from(["Brazil", "scooter", "electric", "toaster", "climb", "widgets",
                                       "revenue", "customers", "Germany"]), min_size=1, max_size=5, unique=True))
def test_adding_passages_with_the_terms_never_turns_answerable_into_refused(extra: list[str]) -> None:
    """Monotone: a store that holds more text can only make an ask more answerable."""
    q = "How much " + " ".join(extra) + " did Acme report?"
    small = _verdict(q)
    big = _verdict(q, [*PASSAGES, " ".join(extra)])
    assert big.answerable or not small.answerable
    assert big.answerable  # a passage with every term answers every ask


def _store(tmp_path: Path) -> DocStore:
    store = DocStore(tmp_path / "docstore.sqlite")
    for ticker, company, filed, text in [
        ("ACME", "Acme Corp", date(2024, 2, 1), " ".join(PASSAGES)),
        ("ACME", "Acme Corp", date(2025, 2, 1), "Acme opened a factory in Brazil in 2025."),
        ("BETA", "Beta Industries Inc.", date(2024, 3, 1), "Beta ships toasters to retailers."),
    ]:
        doc_id = Document.make_id(f"t:{ticker}:{filed}", text)
        doc = Document(id=doc_id, source_key=f"t:{ticker}:{filed}", ticker=ticker, cik=None, company=company,
                       source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=filed,
                       period_end=None, url=None, title=f"{ticker} 10-K", text=text)
        parent = Parent(id=f"p-{doc_id[:8]}", doc_id=doc_id, start=0, end=len(text), section=None)
        chunk = Chunk(id=Chunk.make_id(doc_id, 0, len(text)), doc_id=doc_id, parent_id=parent.id, start=0,
                      end=len(text), parent_start=0, parent_end=len(text), section=None, text=text, ticker=ticker,
                      source=Source.LOCAL, form="10-K", filed_at=filed.year * 10000 + filed.month * 100 + filed.day)
        store.add_document_with_chunks(doc, [parent], [chunk])
        store.set_status(doc_id, "indexed")
    return store


def test_check_respects_as_of_and_compared_companies(tmp_path: Path) -> None:
    store = _store(tmp_path)
    check = AnswerabilityCheck(store)
    parser = QuestionParser(store, shaping=False)

    def run(question: str, as_of: date) -> Any:
        return check.run(parser.parse(question, as_of, "ACME"))

    q = "How many widgets were sold in Brazil?"
    early = run(q, date(2024, 12, 31))  # the Brazil filing is dated later: invisible
    assert not early.answerable and early.documents == 1 and [t.word for t in early.missing] == ["brazil"]
    late = run(q, date(2025, 12, 31))
    assert late.answerable and late.documents == 2
    compare = run("Compare the toasters of Acme and Beta.", date(2025, 12, 31))
    assert compare.answerable and compare.scope == ("ACME", "BETA")
    alone = run("How many toasters did Acme ship to retailers?", date(2025, 12, 31))
    assert not alone.answerable  # Beta's text is not Acme's evidence when Beta is not compared
    assert run(q, date(2025, 12, 31)).to_log() == late.to_log()  # cached: same verdict


@pytest.mark.parametrize("as_of", [date(2024, 12, 31), date(2025, 12, 31)])
def test_evidence_coverage_is_logged(tmp_path: Path, as_of: date) -> None:
    from equimind.core.search import EvidenceNode

    node = EvidenceNode(id="n", doc_id="x", start=0, end=10, text=PASSAGES[0], ticker="ACME", company="Acme",
                        source=Source.LOCAL, form="10-K", filed_at=date(2024, 2, 1), section=None, score=1.0,
                        doc_sha256="0")
    store = _store(tmp_path)
    parsed = QuestionParser(store, shaping=False).parse("How many widgets were sold in Germany?", as_of, "ACME")
    v = AnswerabilityCheck(store).run(parsed, [node])
    assert v.evidence_best == 3 and v.to_log()["evidence_best_terms"] == 3


def test_a_term_is_present_where_a_phrase_of_its_vocabulary_group_is() -> None:
    from equimind.lexicon.vocabulary import stem_alternatives

    passages = ["The board authorized a new share repurchase program of $25 billion in May 2024.",
                "Acme returned cash to shareholders through dividends."]
    a = analyse("How large is the buyback programme Acme announced in May 2024?", ACME, [], STEM)
    stems = [t.stem for t in a.terms]
    plain = judge(a, scope_stats([_doc_terms(passages)], stems, a.names), ["ACME"])
    assert not plain.answerable  # "buyback" and "programme" are written nowhere ...
    alts = stem_alternatives(stems, STEM)
    grouped = judge(a, scope_stats([_doc_terms(passages)], stems, a.names, alts), ["ACME"])
    assert grouped.answerable and grouped.best is not None and grouped.best.start == 0  # ... their group words are
    assert not judge(a, scope_stats([_doc_terms(["Acme sold widgets."])], stems, a.names, alts), ["ACME"]).answerable
