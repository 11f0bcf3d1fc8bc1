"""Per-question product scores (EquiMindEngine.search, top 10) over a cached golden or FinanceBench context store, with
whatever `equimind` is first on PYTHONPATH (another commit's tree, or this one): for paired before/after comparisons
of code changes over the same store (issue 15). Variants: full | noshape (Settings.query_shaping off) | noidentity (no
SEC ticker map: live mode without an SEC identity, so no network) | parts12 (both off). STORE_VARIANT: the store's
embedding-text variant (default: the product's, ``statement``; ``context`` for a title-section-v1 store).

    PYTHONPATH=$PWD python benchmarks/product_probe.py golden STORE_DIR out.json [variant [STORE_VARIANT]]
    python benchmarks/product_probe.py paired a.json b.json
"""
import json
import sys
from pathlib import Path

from equimind.app.engine import EquiMindEngine
from equimind.core.config import Settings
from equimind.evaluation.metrics import score_judgements
from equimind.evaluation.runner import open_variant_store, product_variant, stored_documents

if sys.argv[1] == "paired":
    import numpy as np

    from equimind.evaluation.metrics import bootstrap_ci, paired_bootstrap_ci
    a, b = (json.loads(Path(p).read_text()) for p in sys.argv[2:4])
    assert [r["id"] for r in a] == [r["id"] for r in b], "the two files score different questions"
    for m in ("recall@10", "mrr@10"):
        x, y = np.array([r[m] for r in a]), np.array([r[m] for r in b])
        ca, cb = bootstrap_ci(x, n_resamples=10_000, seed=0), bootstrap_ci(y, n_resamples=10_000, seed=0)
        d = paired_bootstrap_ci(x, y, n_resamples=10_000, seed=0)
        print(f"{m}: A {ca.estimate:.3f} [{ca.low:.3f}, {ca.high:.3f}]  B {cb.estimate:.3f} [{cb.low:.3f}, "
              f"{cb.high:.3f}]  A-B {d.estimate:+.3f} [{d.low:+.3f}, {d.high:+.3f}]")
    print("changed recall@10:", [(r["id"], r["recall@10"], s["recall@10"]) for r, s in zip(a, b, strict=True)
                                 if r["recall@10"] != s["recall@10"]])
    sys.exit(0)
bench, store, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
variant = sys.argv[4] if len(sys.argv) > 4 else "full"
store_variant = sys.argv[5] if len(sys.argv) > 5 else product_variant()
kw = {"home": store, "snapshot": Path("/work/shared/corpus"), "sec_identity": None}
if variant == "noshape":
    kw["query_shaping"] = False
if variant in ("noidentity", "parts12"):
    kw["snapshot"] = None
if variant == "parts12":
    kw["query_shaping"] = False
settings = Settings(**kw)
services, _ = open_variant_store(settings, store_variant, list, lambda docs: True)
docs = stored_documents(services)
if bench == "golden":
    from equimind.evaluation.golden import build_queries, load_golden
    queries = build_queries(load_golden(), docs, "shared")
else:
    from equimind.evaluation.financebench import build_queries, load_questions
    queries = build_queries(load_questions(Path("/work/shared/benchmarks/financebench")), docs, "shared")
engine = EquiMindEngine(services)
js = []
rows = []
for q in queries:
    res = engine.search(q.text, top_k=10)
    js.append(q.judge(list(res.hits)))
    rows.append({"id": q.id, "type": q.qtype, "query": res.query, "filter": res.auto_filter})
sc = score_judgements(js, (1, 5, 10))
for i, r in enumerate(rows):
    r["recall@10"] = float(sc["recall_any@10"][i])
    r["mrr@10"] = float(sc["mrr@10"][i])
out.write_text(json.dumps(rows, indent=1))
print(bench, len(rows), "recall@10", sc["recall_any@10"].mean(), "mrr@10", sc["mrr@10"].mean())
