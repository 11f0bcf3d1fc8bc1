"""Paraphrases of a decision ask read the same evidence (issue 32): a decision ask with no topic is researched as one
text; the company's name is known before its filings are stored (the SEC ticker map), so "Should I buy Tesla?" on a
new home names no topic either. Measured end to end by ``python -m benchmarks.paraphrase_stability``."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from equimind.app.services import open_services
from equimind.core.config import Settings
from equimind.embedding.embed import HashEmbedder
from equimind.research.loop import DECISION_RESEARCH_TEXT, research_text

AS_OF = date(2025, 9, 30)


def test_decision_paraphrases_share_one_research_text_and_a_topic_keeps_its_own(shared_dir: Path,
                                                                               tmp_path: Path) -> None:
    services = open_services(Settings(home=tmp_path, snapshot=shared_dir / "corpus", shared=shared_dir),
                             embedder=HashEmbedder())
    try:
        assert services._entity_name("TSLA") == "Tesla, Inc."  # no companyfacts recorded: the ticker map's name
        parse = services.question_parser.parse
        for q in ("Should I buy Tesla?", "Is TSLA a good investment?", "TSLA: buy or sell?",
                  "Should I invest in Tesla?", "Would you recommend buying Tesla stock?"):
            pq = parse(q, AS_OF, "TSLA")
            assert pq.ask.topic == () and research_text(pq) == DECISION_RESEARCH_TEXT, q
        topical = parse("Is Tesla's energy storage growth sustainable?", AS_OF, "TSLA")
        assert research_text(topical) == topical.text
        specific = parse("What was Tesla's automotive revenue in 2024?", AS_OF, "TSLA")
        assert research_text(specific) == specific.text
    finally:
        services.close()


def test_a_stored_market_report_is_reused_only_in_its_own_scope(shared_dir: Path, tmp_path: Path) -> None:
    """An upgraded report version, another snapshot folder or another web configuration computes its own figures."""
    from equimind.app.services import figure_scope
    from equimind.store.figures import FigureCache

    base = Settings(home=tmp_path, snapshot=shared_dir / "corpus", shared=shared_dir)
    scopes = {figure_scope(base), figure_scope(base.model_copy(update={"snapshot": tmp_path})),
              figure_scope(base.model_copy(update={"snapshot": None})),
              figure_scope(base.model_copy(update={"job_boards": {"NVDA": "greenhouse:nvda"}}))}
    assert len(scopes) == 4 and figure_scope(base) == figure_scope(base.model_copy())
    path = tmp_path / "figures.sqlite"
    old, new = FigureCache(path, scope="a"), FigureCache(path, scope="b")
    old.put("NVDA", AS_OF, "snapshot", "{}")
    assert old.get("NVDA", AS_OF, "snapshot") == "{}" and new.get("NVDA", AS_OF, "snapshot") is None
    old.close()
    new.close()
