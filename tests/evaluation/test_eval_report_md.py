"""docs/evaluation.md is rendered from result files: numbers come from the JSON, missing files are named."""

from __future__ import annotations

from pathlib import Path

from equimind.evaluation.report import result_envelope, write_json
from equimind.evaluation.report_md import render_markdown


def _metric(mean: float) -> dict[str, float]:
    return {"mean": mean, "ci_low": mean - 0.1, "ci_high": mean + 0.05}


def _block(recall: float) -> dict[str, object]:
    arm = {"n": 2, "mean_latency_ms": 3.5, "per_type": {"t": {"n": 2, "recall_any@10": recall, "mrr@10": 0.4,
                                                            "ndcg@10": 0.3}},
           "metrics": {"recall_any@10": _metric(recall), "mrr@10": _metric(0.4), "ndcg@10": _metric(0.3)}}
    diff = {m: {"diff": 0.125, "ci_low": -0.05, "ci_high": 0.3} for m in ("recall_any@10", "mrr@10", "ndcg@10")}
    return {"n_questions": 2, "arms": {"dense": arm, "hybrid": arm, "hybrid+rerank": {"unavailable": "no model"}},
            "hybrid_vs_dense": diff}


def test_render_uses_the_result_numbers(tmp_path: Path) -> None:
    metrics = {"base/shared": _block(0.625), "variant_vs_base": {}, "parsed_vs_shared": {}}
    write_json(tmp_path / "eval_financebench.json", result_envelope({"k": 10}, metrics, corpus="abc"))
    text = render_markdown(tmp_path)
    assert "| dense | 0.625 [0.525, 0.675] |" in text
    assert "hybrid+rerank | unavailable |" in text
    assert "hybrid − dense (paired): recall@10 +0.125 [-0.050, +0.300]" in text
    assert "Not run yet" in text  # the golden file is missing


def test_product_block_is_rendered_with_its_per_type_table_and_misses(tmp_path: Path) -> None:
    block = _block(0.5)
    product = {"what": "EquiMindEngine.search", "mode": ["hybrid+rerank"], "degraded": ["rerank: unavailable (x)"],
               "auto_filtered": 1, "n_questions": 2, "summary": block["arms"]["dense"],  # type: ignore[index]
               "product_minus_context_shared_parsed_hybrid": block["hybrid_vs_dense"],
               "per_query": [{"id": "q1", "type": "t", "recall@10": 1.0}, {"id": "q2", "type": "t", "recall@10": 0.0}]}
    metrics = {"product": product, "context/shared": _block(0.625)}
    write_json(tmp_path / "eval_golden.json", result_envelope({"k": 10, "product_block": "product"}, metrics))
    text = render_markdown(tmp_path)
    assert "### Product (`equimind search`)" in text
    assert "| product | 0.500 [0.400, 0.550] |" in text
    assert "product − context_shared_parsed_hybrid (paired): recall@10 +0.125" in text
    assert "Per question type (product):" in text and "Not found in the top 10 (1): q2." in text
    assert "1 of 2 questions got a parsed filter" in text


def test_answer_correctness_sections_render_from_the_result_only() -> None:
    from equimind.evaluation.report_answers import correctness_sections

    share = {"k": 1, "n": 2, "share": 0.5, "ci95": [0.09, 0.91]}
    tally = {"n": 2, "correct": 1, "wrong": 0, "refused": 1, "correct_share": 0.5, "correct_ci95": [0.09, 0.91],
             "false_refusal_share": 0.5, "gold_reached": 2}
    env = {"git": {"sha": "abcdef123", "dirty": False}, "created_at": "2026-12-01T00:00:00Z", "metrics": {
        "answer_correctness": {
            "golden": {"as_of": "2025-09-30", "by_type": {"factual": tally}, "misses_by_cause": {"wrong: x": 1}},
            "financebench": {"by_type": {"all": {"n": 2, "refused": share, "on_gold_page": share,
                                                 "numbers_found": share, "answer_bearing": share}},
                             "rows": [{"refused": True, "refusal": "no_company"}, {"refused": False}]}}}}
    text = "\n".join(correctness_sections(env))
    assert "| factual | 2 | 1 | 0 | 1 | 0.500 [0.090, 0.910] | 0.500 | 2 |" in text
    assert "| all | 2 | 0.500 [0.090, 0.910] (1/2) |" in text and "no_company: 1" in text
    assert text.count("Result of commit `abcdef1`") == 2
    assert correctness_sections({"metrics": {"runs": 3}}) == []
