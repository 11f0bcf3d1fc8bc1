"""Query shaping keeps the ask and the financial statement its instructions name, drops the instructions."""

from __future__ import annotations

from equimind.query.shape import concept_words, shape_query


def test_instruction_sentences_are_dropped_but_their_statement_is_kept() -> None:
    q = ("What is the FY2018 capital expenditure amount for Acme? Give a response to the question by relying on the "
         "details shown in the cash flow statement.")
    shaped = shape_query(q)
    assert shaped.text == "What is the FY2018 capital expenditure amount for Acme? cash flow statement"
    assert shaped.terms == ("payments to acquire property plant and equipment",)


def test_an_ask_after_a_colon_loses_its_preamble_not_its_statement() -> None:
    q = ("Assume that you are an analyst. Answer the following question by primarily using information that is shown "
         "in the balance sheet: what is the year end FY2020 net PP&E for Acme? Answer in USD billions.")
    assert shape_query(q).text == "what is the year end FY2020 net PP&E for Acme? balance sheet"


def test_a_question_whose_colon_introduces_options_is_kept_whole() -> None:
    q = "Which grew faster in the latest fiscal year: AWS or the data center business?"
    assert not shape_query(q).changed


def test_conditional_instructions_after_the_question_go() -> None:
    q = ("Does Acme have an improving operating margin profile as of 2022? If operating margin is not a useful "
         "metric for a company like this, then state that and explain why.")
    assert shape_query(q).text == "Does Acme have an improving operating margin profile as of 2022?"


def test_statement_named_in_the_question_itself_is_not_repeated() -> None:
    q = "Using the balance sheet, what was Acme's total debt in 2023? Base your answer on the balance sheet."
    assert shape_query(q).text == "Using the balance sheet, what was Acme's total debt in 2023?"
    assert shape_query("Statements of cash flows. What was capex?").text == "What was capex? statements of cash flows"


def test_text_without_a_question_is_searched_as_given() -> None:
    assert shape_query("supply chain risk. export controls").text == "supply chain risk. export controls"
    assert shape_query("  What   drives margins? ").text == "What drives margins?"


def test_a_paraphrased_metric_brings_the_words_of_its_xbrl_concept_for_the_bm25_leg() -> None:
    shaped = shape_query("What was Apple's bottom-line profit in fiscal 2024?")
    assert shaped.text == "What was Apple's bottom-line profit in fiscal 2024?"  # the dense leg's query is unchanged
    assert shaped.terms == ("net income loss",)
    assert shaped.changed
    assert concept_words("How much did NVIDIA earn, and what did it spend on R&D?") == \
        ["net income loss", "research and development expense"]
    assert shape_query("capex 2024").terms == ("payments to acquire property plant and equipment",)


def test_statement_names_are_not_metrics_and_known_words_are_not_repeated() -> None:
    assert concept_words("Using the cash flow statement and the statement of income, what happened?") == []
    assert concept_words("What were total revenues?") == []  # "revenues" is already there
    assert concept_words("What were research and development expense totals?") == []
    assert not shape_query("What drives margins?").changed


def test_engine_search_finds_a_line_item_that_shares_no_word_with_the_paraphrase(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """"bottom-line profit" names no word of "Net income (loss)"; the concept words reach it through BM25, and the
    search result says which words were added."""
    from datetime import date

    from equimind.app.engine import EquiMindEngine
    from equimind.app.services import open_services
    from equimind.core.config import Settings
    from equimind.core.documents import Document, Origin, Section, Source
    from equimind.embedding.embed import HashEmbedder
    from equimind.ingest.tokens import WhitespaceTokenizer

    filler = " ".join(f"Paragraph {j} discusses store openings and staffing." for j in range(40))
    text = f"Item 8. Financial Statements\n{filler}\n| Net income (loss) | 1,234 |\n{filler}"
    doc = Document(id=Document.make_id("acme", text), source_key="acme", ticker="ACME", cik=None, company="Acme",
                   source=Source.LOCAL, origin=Origin.LOCAL_FILE, form="10-K", filed_at=date(2024, 2, 1),
                   period_end=None, url=None, title="Acme 10-K", text=text,
                   sections=(Section("Item 8. Financial Statements", 0, len(text)),))
    services = open_services(Settings(home=tmp_path / "h", child_tokens=40, parent_tokens=120),
                             embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer())
    services.pipeline().run([doc])
    engine = EquiMindEngine(services)
    res = engine.search("What was Acme's bottom-line profit?", mode="bm25", top_k=3)
    assert res.sparse_terms == "net income loss" and res.query == "What was Acme's bottom-line profit?"
    assert "Net income (loss)" in res.hits[0].text
    off = Settings(home=tmp_path / "h", child_tokens=40, parent_tokens=120, query_shaping=False)
    plain = EquiMindEngine(open_services(off, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer()))
    res_off = plain.search("What was Acme's bottom-line profit?", mode="bm25", top_k=3)
    assert res_off.sparse_terms == "" and all("Net income" not in h.text for h in res_off.hits)


def test_a_named_ratio_brings_the_words_of_the_line_items_it_is_computed_from() -> None:
    assert shape_query("What drove operating margin change as of FY2022 for 3M?").terms == \
        ("operating income loss", "revenues")
    assert concept_words("Are Best Buy's gross margins historically consistent?") == ["gross profit", "revenues"]
    assert concept_words("How does Boeing's effective tax rate in FY2022 compare to FY2021?") == \
        ["income tax expense benefit", "income loss before income taxes"]
    assert concept_words("Is 3M a capital-intensive business?") == \
        ["payments to acquire property plant and equipment", "property plant and equipment net", "revenues", "assets"]
    # the ratio's own words are not read as a metric: "profit margin" is not "profit" (net income loss twice)
    assert concept_words("What is the profit margin and the revenue?") == ["net income loss", "revenues"]
