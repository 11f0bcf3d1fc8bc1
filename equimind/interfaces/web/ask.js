/* EquiMind dashboard, the Ask page: a specific question streamed from POST /api/v1/ask/stream (stage events, then
   the Answer). The direct answer comes first, then the support verdict, each sentence with its verified quotes
   (each loaded from GET /api/v1/documents/{doc_id} and shown highlighted in its surrounding text) and figures, or
   the refusal with its missing terms; degraded capabilities are listed. Uses app.js's helpers (window.EquiUI);
   every server string is inserted as text, never as HTML. */
"use strict";

(function () {
  const QUOTE_CONTEXT = 300;  // characters of filing text either side of a quoted span
  const ROLE_LABEL = { row: "table row", header: "table header (the period)", evidence: "evidence",
                       caption: "caption" };
  const SUPPORT_LABEL = { supported: "Supported", partial: "Partly supported", refused: "Refused" };

  function ui() { return window.EquiUI; }

  function askPayload() {
    const $ = ui().$;
    return { question: $("a-question").value.trim(), ticker: $("a-ticker").value.trim().toUpperCase() || null,
             as_of: $("a-asof").value || null };
  }

  /* One quoted span: its meta line (role, doc id, span, sha256), then the span in context once loaded. */
  function quoteBlock(q) {
    const { h, openPassage } = ui();
    const meta = h("div", { class: "a-quote-meta muted" },
      h("b", { text: ROLE_LABEL[q.role] || q.role }),
      " · doc " + q.doc_id.slice(0, 12) + "… · characters " + q.start + "–" + q.end +
      " · sha256 " + q.doc_sha256.slice(0, 12) + " ",
      h("button", { class: "cite", text: "Open in filing", attrs: { type: "button", title: q.doc_id },
                    onclick: () => openPassage(q.doc_id, q.start, q.end) }));
    const context = h("div", { class: "a-context passage-text" },
                      h("mark", { class: "a-mark", text: q.text }));  // the span alone until its context arrives
    return h("div", { class: "a-quote", data: { doc: q.doc_id, start: q.start, end: q.end, role: q.role } },
             meta, context);
  }

  async function loadContext(block) {
    const { fetchPassage, passageNodes } = ui();
    const d = block.dataset, box = block.querySelector(".a-context");
    try {
      const p = await fetchPassage(d.doc, Number(d.start), Number(d.end), QUOTE_CONTEXT);
      box.textContent = "";
      const nodes = passageNodes(p, { class: "a-mark" });
      box.append(...nodes);
      // centre the span in its box (the box scrolls, not the page)
      box.scrollTop = Math.max(0, nodes[1].offsetTop - (box.clientHeight - nodes[1].offsetHeight) / 2);
      block.dataset.context = "loaded";
    } catch (e) {
      box.append(ui().h("p", { class: "error-text", text: "context unavailable: " + e.message }));
      block.dataset.context = "failed";
    }
  }

  function period(f) {
    if (f.period_start && f.period_end) return f.period_start + " to " + f.period_end;
    return f.period_end ? "at " + f.period_end : "–";
  }

  function figureTable(figures) {
    const { h, fmtNum } = ui();
    const table = h("table", { class: "table a-figures" }, h("tr", {}, ...["figure", "value", "unit", "period",
      "concept", "accession", "form", "filed"].map(t => h("th", { text: t }))));
    for (const f of figures) {
      const pv = f.provenance || {};
      table.append(h("tr", { class: "a-figure" }, h("td", { text: f.name }), h("td", { text: fmtNum(f.value, 4) }),
        h("td", { text: f.unit }), h("td", { text: period(f) + (pv.fiscal_period ? " (" + pv.fiscal_period + ")" : "") }), h("td", { text: pv.concept || pv.formula || "–" }),
        h("td", { text: pv.accession || "–" }), h("td", { text: pv.form || "–" }),
        h("td", { text: pv.filed || "–" })));
    }
    return table;
  }

  function sentenceItem(s) {
    const { h } = ui();
    const li = h("li", { class: "a-sentence", data: { method: s.method } },
      h("p", { class: "a-sentence-text" }, h("span", { class: "method", text: s.method }), " ",
        h("span", { class: "a-text", text: s.text })));
    for (const v of s.values || []) {
      li.append(h("span", { class: "figure-chip", text: "stated " + v.text + (v.period ? " · " + v.period : "") }));
    }
    if (s.figures && s.figures.length) li.append(figureTable(s.figures));
    for (const q of s.quotes || []) li.append(quoteBlock(q));
    if (!(s.quotes || []).length && !(s.figures || []).length) {
      li.append(h("p", { class: "error-text", text: "no quote or figure attached to this sentence" }));
    }
    return li;
  }

  function renderRefusal(r) {
    const { $, h } = ui();
    $("a-refusal").hidden = !r;
    $("a-refusal-msg").textContent = r ? "Refused (" + r.reason + "): " + r.message : "";
    const box = $("a-missing");
    box.textContent = "";
    if (r && r.missing && r.missing.length) {
      box.append(h("b", { text: "Missing from the documents: " }),
                 ...r.missing.map(t => h("span", { class: "missing-term", text: t })));
    }
  }

  function renderSearched(passages) {
    const { $, h, fmtNum } = ui();
    const table = $("a-searched");
    table.textContent = "";
    $("a-searched-n").textContent = "(" + passages.length + ")";
    table.append(h("tr", {}, ...["ticker", "form", "filed", "characters", "score"].map(t => h("th", { text: t }))));
    for (const p of passages) {
      table.append(h("tr", {}, h("td", { text: p.ticker || "–" }), h("td", { text: p.form || "–" }),
        h("td", { text: p.filed_at || "–" }), h("td", { text: p.start + "–" + p.end }),
        h("td", { text: fmtNum(p.score, 3) })));
    }
  }

  function renderDegraded(lines) {
    const { $, h } = ui();
    const box = $("a-degraded");
    box.textContent = "";
    if (lines && lines.length) {
      box.append(h("h4", { text: "Degraded" }), h("ul", {}, ...lines.map(d => h("li", { text: d }))));
    }
  }

  async function renderAnswer(a) {
    const { $ } = ui();
    const result = $("a-result");
    result.hidden = false;
    result.dataset.support = a.support;
    result.dataset.context = "loading";
    const direct = a.sentences.map(s => s.text).join(" ");
    $("a-answer").textContent = direct || (a.refusal ? "No answer: the evidence does not answer this question."
                                                      : "No answer.");
    const badge = $("a-support");
    badge.textContent = SUPPORT_LABEL[a.support] || a.support;
    badge.dataset.support = a.support;
    $("a-meta").textContent = [a.ticker, "as of " + a.as_of, "kind " + a.kind,
      a.dropped_sentences ? a.dropped_sentences + " unverified sentence(s) dropped" : null].filter(Boolean).join(" · ");
    renderRefusal(a.refusal);
    const list = $("a-sentences");
    list.textContent = "";
    a.sentences.forEach(s => list.append(sentenceItem(s)));
    renderDegraded(a.degraded);
    renderSearched(a.passages_searched || []);
    $("a-status").textContent = "done";
    await Promise.all([...list.querySelectorAll(".a-quote")].map(loadContext));
    result.dataset.context = "done";
  }

  async function streamAsk(payload) {
    const { postSse, addProgress, showError } = ui();
    let answer = null;
    await postSse("/ask/stream", payload, (event, data) => {
      const obj = JSON.parse(data);
      if (event === "stage") addProgress(obj, "a-progress", "a-status");
      else if (event === "answer") answer = obj;
      else if (event === "error") showError("a-error", "Ask failed (" + obj.status + "): " + obj.detail);
    });
    return answer;
  }

  async function runAsk(ev) {
    ev.preventDefault();
    const { $, showError, loadHealth } = ui();
    showError("a-error", "");
    $("a-progress").textContent = "";
    $("a-progress-box").hidden = false;
    $("a-result").hidden = true;
    delete $("a-result").dataset.support;
    $("a-status").textContent = "starting…";
    $("a-run").disabled = true;
    try {
      const answer = await streamAsk(askPayload());
      if (answer) await renderAnswer(answer);
      else $("a-status").textContent = "failed";
    } catch (e) {
      showError("a-error", e.message);
      $("a-status").textContent = "failed";
      $("a-progress-box").hidden = !$("a-progress").children.length;  // refused before any stage: only the error
    } finally {
      $("a-run").disabled = false;
      loadHealth();  // the ask may have fetched filings or facts: refresh the header's counts
    }
  }

  window.EquiAsk = { sentenceItem };  // app.js shows a research run's answer (rec.answer) with the same items

  document.addEventListener("DOMContentLoaded", () => {
    ui().$("ask-form").addEventListener("submit", runAsk);
  });
})();
