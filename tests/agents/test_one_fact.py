"""One fact, one claim (issue 32): a line stated for two periods is one claim citing both; a sentence argues one
side at most; the thesis weighs both sides and cites every point; the judge's risk and catalyst lists hold a fact once.
"""

from __future__ import annotations

import re
from datetime import date

from equimind.core.research import Figure, Rating, Speaker
from equimind.debate import cues
from equimind.debate.claim_model import claim_judge_for
from equimind.debate.judge import judge
from equimind.debate.offline import (
    OfflineAnalyst,
    figure_claims,
    merge_figure_lines,
    merge_periods,
    one_side_per_sentence,
    period_masked,
    same_line,
)
from equimind.debate.records import Basis, BasisKind, DraftClaim, SpanRef, Theme
from equimind.debate.required import aspect_coverage, check_required
from equimind.embedding.embed import HashEmbedder

Q2 = ("Direct Customers – For the second quarter of fiscal year 2026, sales to one direct customer, Customer A, "
      "represented 23% of total revenue; and sales to a second direct customer, Customer B, represented 16% of total "
      "revenue.")
H1 = ("For the first half of fiscal year 2026, sales to one direct customer, Customer A, represented 20% of total "
      "revenue; and sales to a second direct customer, Customer B, represented 15% of total revenue.")
OTHER = "Sales to customers in China declined as export licences were not granted."


def _claim(cid: str, side: Speaker, quote: str, start: int, *, cue: str = "customer_concentration",
           strength: float = 0.5, theme: Theme = Theme.CONCENTRATION, doc: str = "d1") -> DraftClaim:
    return DraftClaim(id=cid, speaker=side, text=f"{cue}: “{quote}”", theme=theme, strength=strength,
                      signal=f"cue:{cue}", spans=(SpanRef(doc, start, start + len(quote), quote),),
                      evidence_date=date(2025, 8, 27), basis=Basis(BasisKind.CUE, cue))


def test_period_masking_equates_one_line_for_two_periods() -> None:
    assert period_masked("Revenue was $46.7 billion in the three months ended July 27, 2025") == period_masked(
        "Revenue was $90.8 billion in the six months ended July 27, 2025")
    assert period_masked(Q2) != period_masked(H1)  # a glued heading ("Direct Customers –") is dropped first
    assert same_line(Q2, H1) and not same_line(OTHER, Q2)
    # a cost line is not its revenue line, however alike the wording
    assert not same_line("Cost of services and other revenue increased $439 million, or 18%, in the three months "
                         "ended June 30, 2025 as compared to the three months ended June 30, 2024.",
                         "Services and other revenue increased $438 million, or 17%, in the three months ended June "
                         "30, 2025 as compared to the three months ended June 30, 2024.")
    assert same_line("Products gross margin percentage decreased during the third quarter of 2025 compared to the "
                     "third quarter of 2024 due primarily to tariff costs.",
                     "Products gross margin percentage decreased during the first nine months of 2025 compared to "
                     "the same period in 2024 due primarily to tariff costs and a different mix.")


def test_two_periods_of_one_line_become_one_claim_citing_both() -> None:
    merged = merge_periods([_claim("a", Speaker.BEAR, Q2, 100), _claim("b", Speaker.BEAR, H1, 400),
                            _claim("c", Speaker.BEAR, OTHER, 900, cue="china")])
    assert len(merged) == 2
    both = next(c for c in merged if c.id == "a")
    assert [s.start for s in both.spans] == [100, 400] and "for another period" in both.text
    # another document, or another cue, is another fact
    assert len(merge_periods([_claim("a", Speaker.BEAR, Q2, 100), _claim("b", Speaker.BEAR, H1, 400, doc="d2")])) == 2
    assert len(merge_periods([_claim("a", Speaker.BEAR, Q2, 100), _claim("b", Speaker.BEAR, H1, 400, cue="x")])) == 2


def test_a_sentence_read_both_ways_argues_neither_side_and_is_said() -> None:
    kept, notes = one_side_per_sentence([
        _claim("bull", Speaker.BULL, OTHER, 0, cue="margin_expansion", strength=0.5, theme=Theme.PROFITABILITY),
        _claim("bear", Speaker.BEAR, OTHER, 0, cue="trade_tariffs", strength=0.45, theme=Theme.REGULATION),
        _claim("bear2", Speaker.BEAR, Q2, 200)])
    assert [c.id for c in kept] == ["bear2"]
    assert len(notes) == 1 and "argues neither side" in notes[0] and "margin_expansion" in notes[0]


def test_the_same_sentence_twice_on_one_side_is_kept_once() -> None:
    kept, notes = one_side_per_sentence([_claim("x", Speaker.BEAR, OTHER, 0, cue="china", strength=0.45),
                                         _claim("y", Speaker.BEAR, OTHER, 0, cue="trade_tariffs", strength=0.5)])
    assert [c.id for c in kept] == ["y"] and notes == []


def test_the_thesis_weighs_both_sides_and_cites_every_point() -> None:
    claims = [_claim("b1", Speaker.BULL, "Revenue was up 56% from a year ago.", 0, cue="revenue_up", strength=0.6,
                     theme=Theme.GROWTH),
              _claim("b2", Speaker.BULL, "Operating income rose 53% on higher sales.", 50, cue="earnings_up",
                     strength=0.5, theme=Theme.PROFITABILITY),
              _claim("r1", Speaker.BEAR, Q2, 300)]
    v = judge(claims, date(2025, 9, 30))
    assert v.rating in (Rating.BUY, Rating.STRONG_BUY)
    t = v.thesis
    assert t.startswith("Bull case prevails: S = ") and "Bear: (1)" in t and "The bear case lost: its 1 claim(s)" in t
    assert "d1:0-" in t and "d1:300-" in t  # each point names the span it rests on
    # every number in the thesis is a claim's (cited next to it) or the rule's own S, B, R, thresholds and weights
    rule_numbers = {f"{v.score:+.2f}", f"{v.bull_weight:.2f}", f"{v.bear_weight:.2f}", "+0.15"}
    claim_text = " ".join(c.text for c in claims)
    for n in re.findall(r"[+−-]?\d+(?:\.\d+)?%?", t):
        assert (n in rule_numbers or n.lstrip("+−-") in claim_text or "weight " + n in t
                or n in ("1", "2", "3") or re.search(rf"d1:\d*{re.escape(n)}", t)), n
    assert len(v.key_risks) == 1 and len(v.key_catalysts) == 2


def _fig(fid: str, value: float | None, note: str = "") -> Figure:
    return Figure(id=fid, name=fid.replace("_", " "), value=value, unit="ratio", as_of=date(2025, 8, 27), formula="",
                  provenance={"note": note} if note else {})


def test_required_figures_are_stated_or_named_missing_with_the_reason() -> None:
    full = [_fig("pe_ttm", 53.16), _fig("revenue_growth_yoy", 0.556), _fig("net_income_growth_yoy", 0.592),
            _fig("operating_margin_change_ttm", -0.012), _fig("debt_to_equity", 0.0845)]
    got = check_required(full)
    assert got.missing == ()
    assert got.stated[0] == "valuation: pe ttm 53.16 [figure pe_ttm]"
    assert "margin trend: operating margin change ttm -1.2 points of revenue" in got.stated[3]
    # a loss-maker: P/E has no value, EV/sales states the valuation
    loss = check_required([_fig("pe_ttm", None, "TTM EPS <= 0: P/E not meaningful"), _fig("ev_to_sales_ttm", 4.2),
                           _fig("revenue_growth_ttm", 0.1)])
    assert loss.stated[0] == "valuation: ev to sales ttm 4.20 [figure ev_to_sales_ttm]"
    missing = dict(loss.missing)
    assert set(missing) == {"required.earnings_growth", "required.margin_trend", "required.leverage"}
    none = dict(check_required([_fig("pe_ttm", None, "TTM EPS <= 0: P/E not meaningful")]).missing)
    assert "pe_ttm computed without a value (TTM EPS <= 0: P/E not meaningful)" in none["required.valuation"]
    assert "see the fundamentals lines" in missing["required.leverage"]


class _NeutralOn:
    """A stand-in for the shipped claim model's reading: p(neutral) 0.9 for sentences holding ``word``."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.seen: list[str] = []

    def neutral(self, texts: list[str]) -> list[float]:
        self.seen += texts
        return [0.9 if self.word in t else 0.1 for t in texts]


def test_the_classifier_sets_aside_cue_sentences_it_reads_as_neutral(corpus) -> None:  # type: ignore[no-untyped-def]
    plain = OfflineAnalyst(None).analyse(corpus.evidence, [])
    quotes = [s.quote for c in plain.bull + plain.bear for s in c.spans]
    target = next(q for q in quotes if "export" in q.lower())
    judge = _NeutralOn(target.split()[2])
    vetoed = OfflineAnalyst(None, claim_judge=judge).analyse(corpus.evidence, [])  # type: ignore[arg-type]
    kept = [s.quote for c in vetoed.bull + vetoed.bear for s in c.spans]
    assert target not in kept and len(kept) < len(quotes) and judge.seen
    assert any(line.startswith("Set aside") and "reads as neutral" in line for line in vetoed.conflicts)
    # the veto never moves a claim to the other side: every kept claim keeps its cue's side
    sides = {s.quote: c.speaker for c in plain.bull + plain.bear for s in c.spans}
    assert all(sides[s.quote] is c.speaker for c in vetoed.bull + vetoed.bear for s in c.spans if s.quote in sides)


def test_the_shipped_model_is_off_with_another_embedder_and_says_how_to_turn_it_on() -> None:
    judge, why = claim_judge_for(HashEmbedder())
    assert judge is None and why is not None and "all-MiniLM-L6-v2" in why and "EQUIMIND_EMBED_MODEL" in why
    judge, why = claim_judge_for(None)
    assert judge is None and why == "no sentence embedder was given to the debate"


def test_one_line_with_different_reasons_per_period_is_still_one_claim() -> None:
    q = ("Automotive sales revenue decreased $2.74 billion, or 15%, in the three months ended June 30, 2025 as "
         "compared to the three months ended June 30, 2024, primarily due to lower deliveries.")
    h = ("Automotive sales revenue decreased $6.28 billion, or 18%, in the six months ended June 30, 2025 as "
         "compared to the six months ended June 30, 2024, primarily due to lower average selling prices and mix.")
    other = ("Energy generation and storage revenue increased $870 million, or 19%, in the six months ended June 30, "
             "2025 as compared to the six months ended June 30, 2024.")
    merged = merge_periods([_claim("a", Speaker.BEAR, q, 0, cue="revenue_down"),
                            _claim("b", Speaker.BEAR, h, 300, cue="revenue_down"),
                            _claim("c", Speaker.BEAR, other, 600, cue="revenue_down")])
    assert [len(c.spans) for c in merged] == [2, 1]


def test_growth_of_one_line_over_two_periods_is_one_figure_claim() -> None:
    figs = [Figure(id=i, name=i, value=v, unit="ratio", as_of=date(2025, 8, 27), formula="")
            for i, v in (("revenue_growth_yoy", 0.556), ("revenue_growth_ttm", 0.716), ("pe_ttm", 53.2))]
    merged = merge_figure_lines(figure_claims(figs))
    revenue = [c for c in merged if "revenue_growth_yoy" in c.figure_ids]
    assert len(revenue) == 1 and revenue[0].figure_ids == ("revenue_growth_yoy", "revenue_growth_ttm")
    assert revenue[0].text == ("Revenue grew 55.6% year over year; trailing-twelve-month revenue grew 71.6% "
                               "(as of 2025-08-27)")
    assert revenue[0].strength == 0.8 and len(merged) == 2


def test_every_aspect_is_a_claim_count_or_says_where_no_evidence_was_found() -> None:
    lines = aspect_coverage(["growth", "demand", "valuation", "regulation", "legal"], "the 3 passages read")
    assert lines[0] == "growth: 2 claim(s)" and "regulation and legal: 2 claim(s)" in lines
    assert "margins: no evidence found in the 3 passages read" in lines
    assert "supply: no evidence found there either" in lines
    assert lines[-1].startswith("macro: no claim") and len(lines) == 11


def test_a_bull_cue_inside_the_risk_factors_is_not_a_bull_claim(corpus_factory) -> None:  # type: ignore[no-untyped-def]
    sentence = ("Demand for our products and services remains strong, and we may not be able to meet it in several "
                "markets.")
    assert any(c.side is Speaker.BULL for c in cues.sentence_cues(sentence)[0])  # the cue fires on its own
    corpus = corpus_factory(q_extra=sentence, q_extra_at="risk")
    a = OfflineAnalyst(None).analyse(corpus.evidence, [])
    assert not any(sentence[:30] in s.quote for c in a.bull for s in c.spans)


def test_the_thesis_states_the_strong_rule_and_never_cuts_a_number() -> None:
    themes = (Theme.GROWTH, Theme.PROFITABILITY, Theme.DEMAND, Theme.CAPITAL_RETURN)
    claims = [_claim(f"b{i}", Speaker.BULL, f"Revenue rose {i}0% in the three months ended June 30, 2025 as compared "
                     f"to the three months ended June 30, 2024 on demand for line {i}.", 200 * i,
                     cue=f"c{i}", strength=0.8, theme=themes[i]) for i in range(4)]
    v = judge(claims, date(2025, 9, 30))
    assert v.rating is Rating.STRONG_BUY
    assert "STRONG_BUY at S ≥ +0.50 with ≥ 4 claims over ≥ 2 themes" in v.thesis
    assert "202…" not in v.thesis and "June 30, 20…" not in v.thesis
