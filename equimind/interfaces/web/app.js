/* EquiMind dashboard: research with live progress (Server-Sent Events over a POST), the recommendation with the
   bull and bear cases side by side, every citation opening its highlighted span in the filing, the price chart
   (chart.js) and the evidence explorer. Plain DOM; every server string is inserted as text, never as HTML. */
"use strict";

(function () {
  const API = "/api/v1";
  const $ = id => document.getElementById(id);

  /* h("li", {class: "x", text: "...", data: {k: v}, attrs: {title: "..."}}, child, ...) */
  function h(tag, props, ...children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.class) node.className = p.class;
    if (p.text !== undefined && p.text !== null) node.textContent = String(p.text);
    for (const [k, v] of Object.entries(p.data || {})) node.dataset[k] = String(v);
    for (const [k, v] of Object.entries(p.attrs || {})) node.setAttribute(k, String(v));
    if (p.onclick) node.addEventListener("click", p.onclick);
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  function describe(body, res) {
    if (body && Array.isArray(body.detail)) {
      return body.detail.map(d => {
        const loc = (d.loc || []).filter(x => x !== "body" && x !== "query" && x !== "path").join(".");
        return (loc ? loc + ": " : "") + d.msg;
      }).join("; ");
    }
    if (body && body.detail) return body.detail + (body.hint ? " — " + body.hint : "");
    return res.status + " " + res.statusText;
  }

  async function api(path, options) {
    const res = await fetch(API + path, options);
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (!res.ok) throw new Error(describe(body, res));
    return body;
  }

  function postJson(path, payload) {
    return api(path, { method: "POST", headers: { "Content-Type": "application/json" },
                       body: JSON.stringify(payload) });
  }

  function showError(id, message) {
    const box = $(id);
    box.textContent = message || "";
    box.hidden = !message;
  }

  function fmtNum(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    return v.toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 2 : digits });
  }

  const splitList = s => s.split(",").map(x => x.trim()).filter(Boolean);

  /* ---------------------------------------------------------------- health and tabs */

  async function loadHealth() {
    const box = $("health");
    try {
      const hh = await api("/health");
      const rer = hh.reranker.available ? "reranker on" : "reranker off";
      box.textContent = hh.mode + " · " + hh.store.documents + " documents · " + hh.store.chunks + " chunks · " +
        hh.embedder.name + " · " + rer + " · provider " + hh.provider;
      box.title = (hh.degraded || []).join("\n");
      box.dataset.mode = hh.mode;
      box.dataset.status = hh.status;
      const sel = $("r-provider");
      if ([...sel.options].some(o => o.value === hh.provider)) sel.value = hh.provider;
    } catch (e) {
      box.textContent = "server unreachable: " + e.message;
      box.dataset.status = "down";
    }
  }

  function showPage(name) {
    for (const tab of document.querySelectorAll("button.tab")) {
      tab.classList.toggle("active", tab.dataset.page === name);
    }
    for (const page of document.querySelectorAll("main > section.page")) page.hidden = page.id !== "page-" + name;
  }

  /* ---------------------------------------------------------------- passage viewer */

  function fetchPassage(docId, start, end, context) {
    return api("/documents/" + encodeURIComponent(docId) + "?start=" + start + "&end=" + end + "&context=" + context);
  }

  /* The span in its surrounding text: [before, <mark>span</mark>, after], each inserted as text. */
  function passageNodes(p, markAttrs) {
    const mark = h("mark", { text: p.text, attrs: markAttrs || {} });
    const lead = p.start - p.before.length > 0 ? "…" : "";
    return [lead + p.before, mark, p.after + "…"];
  }

  async function openPassage(docId, start, end) {
    const panel = $("passage");
    panel.hidden = false;
    $("p-title").textContent = "Loading passage…";
    $("p-meta").textContent = "";
    $("p-text").textContent = "";
    try {
      const p = await fetchPassage(docId, start, end, 700);
      const d = p.document;
      $("p-title").textContent = d.title;
      const pages = p.pages ? " · pages " + p.pages[0] + "–" + p.pages[1] : "";
      $("p-meta").textContent = [d.ticker, d.form, "filed " + (d.filed_at || "?"), "section " + (p.section || "–"),
        "characters " + p.start + "–" + p.end + pages, "sha256 " + p.doc_sha256.slice(0, 12)].join(" · ");
      const nodes = passageNodes(p, { id: "p-mark" });
      const mark = nodes[1];
      $("p-text").append(...nodes);
      if (d.url) $("p-meta").append(" · ", h("a", { text: "source", attrs: { href: d.url, rel: "noreferrer" } }));
      mark.scrollIntoView({ block: "center" });
    } catch (e) {
      $("p-title").textContent = "Passage unavailable";
      $("p-text").textContent = e.message;
    }
  }

  function citeButton(c, n) {
    const short = c.quote.length > 90 ? c.quote.slice(0, 90) + "…" : c.quote;
    return h("button", {
      class: "cite", text: "[" + n + "] “" + short + "”",
      data: { doc: c.doc_id, start: c.start, end: c.end },
      attrs: { type: "button", title: c.quote },
      onclick: () => openPassage(c.doc_id, c.start, c.end),
    });
  }

  /* ---------------------------------------------------------------- research */

  /* Step numbers are written out (not list markers), in a column wide enough for "10." and up. */
  function addProgress(ev, listId, statusId) {
    const list = $(listId || "progress");
    const it = ev.iteration !== null && ev.iteration !== undefined ? " · round " + ev.iteration : "";
    const n = list.children.length + 1;
    list.append(h("li", { class: "stage", data: { stage: ev.stage } },
      h("span", { class: "step-n", text: n + "." }), h("span", {}, h("b", { text: ev.stage + it }), " ", ev.message)));
    $(statusId || "r-status").textContent = ev.stage + "…";
  }

  function claimItem(claim, figures) {
    const li = h("li", { class: "claim" }, h("p", { text: claim.text }));
    const meta = h("div", { class: "claim-meta muted",
                            text: "strength " + fmtNum(claim.strength, 2) + (claim.signal ? " · " + claim.signal : "") });
    li.append(meta);
    claim.citations.forEach((c, i) => li.append(citeButton(c, i + 1)));
    for (const fid of claim.figure_ids || []) {
      const f = figures[fid];
      const label = f ? f.name + ": " + fmtNum(f.value, 4) + " " + f.unit + " (as of " + f.as_of + ")" : fid;
      li.append(h("span", { class: "figure-chip", text: label, attrs: { title: f ? f.formula : "" } }));
    }
    return li;
  }

  function renderJudge(j) {
    const box = $("judge");
    box.textContent = "";
    if (!j) return;
    box.append(h("h3", { text: "Judge" + (j.winning_side ? " — " + j.winning_side + " case wins" : "") }),
               h("p", { text: j.winning_thesis }));
    const list = (title, items) => items && items.length
      ? h("div", {}, h("h4", { text: title }), h("ul", {}, ...items.map(t => h("li", { text: t })))) : null;
    box.append(h("div", { class: "grid-2" }, list("Key risks", j.key_risks), list("Key catalysts", j.key_catalysts)));
    const why = list("Reasoning", j.reasoning);
    if (why) box.append(why);
  }

  function renderFigures(figs) {
    const table = $("rec-figures");
    table.textContent = "";
    table.append(h("tr", {}, ...["figure", "value", "unit", "as of", "formula"].map(t => h("th", { text: t }))));
    for (const f of figs) {
      table.append(h("tr", { data: { figure: f.id } }, h("td", { text: f.name }), h("td", { text: fmtNum(f.value, 4) }),
        h("td", { text: f.unit }), h("td", { text: f.as_of || "–" }), h("td", { text: f.formula })));
    }
  }

  function renderRag(rag) {
    const box = $("rec-rag");
    box.textContent = "";
    if (!rag) return;
    box.append(h("p", { text: rag.iterations + " round(s) · converged " + rag.converged + " · coverage " +
      fmtNum(rag.coverage, 2) + " · " + rag.curated_nodes + " passages kept, " + rag.discarded_nodes + " discarded" }));
    for (const it of rag.log || []) {
      box.append(h("div", { class: "rag-round" }, h("b", { text: "Round " + it.iteration + ": " }),
        (it.queries || []).join(" | ")));
    }
  }

  function renderRunAnswer(ans) {
    // a specific ask's answer, or a decision ask's topic answered above the rating (issue 14)
    const box = $("rec-answer");
    box.textContent = "";
    box.hidden = !ans;
    if (!ans) return;
    box.append(h("h3", { text: "Answer to what was asked" }));
    if (ans.sentences.length) {
      box.append(h("ol", { class: "a-sentences" }, ...ans.sentences.map(s => window.EquiAsk.sentenceItem(s))));
    } else {
      box.append(h("p", { class: "muted", text: "No direct answer: " +
        (ans.refusal ? ans.refusal.message : "the evidence does not answer it") }));
    }
  }

  function renderRecommendation(rec) {
    $("result").hidden = false;
    renderRunAnswer(rec.answer);
    const rating = $("rec-rating");
    rating.textContent = rec.rating || "NO RATING";
    rating.dataset.rating = rec.rating || "none";
    $("rec-conviction").value = rec.conviction;
    $("rec-conviction-n").textContent = fmtNum(rec.conviction, 2);
    $("rec-meta").textContent = rec.ticker + " · as of " + rec.as_of + " · provider " + rec.provider;
    $("rec-thesis").textContent = rec.thesis;
    $("rec-refusal").hidden = !rec.refused;
    $("rec-refusal").textContent = rec.refused ? "Refused: " + (rec.refusal_reason || "not enough evidence") : "";
    const figures = Object.fromEntries((rec.figures || []).map(f => [f.id, f]));
    for (const side of ["bull", "bear"]) {
      const list = $(side);
      list.textContent = "";
      const claims = rec[side + "_case"] || [];
      claims.forEach(c => list.append(claimItem(c, figures)));
      if (!claims.length) list.append(h("li", { class: "muted", text: "no verified claims" }));
    }
    renderJudge(rec.judge);
    renderFigures(rec.figures || []);
    renderRag(rec.agentic_rag);
    const deg = $("rec-degraded");
    deg.textContent = "";
    if (rec.degraded && rec.degraded.length) {
      deg.append(h("h4", { text: "Degraded" }),
                 h("ul", {}, ...rec.degraded.map(d => h("li", { text: d.capability + ": " + d.reason }))));
    }
    $("r-status").textContent = "done";
  }

  function dispatchSse(block, onEvent) {
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length) onEvent(event, data.join("\n"));
  }

  /* POST a JSON body to an SSE route and read its events; a non-2xx answer throws the server's explanation. */
  async function postSse(path, payload, onEvent) {
    const res = await fetch(API + path, {
      method: "POST", headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      body: JSON.stringify(payload) });
    if (!res.ok) {
      let body = null;
      try { body = await res.json(); } catch (e) { body = null; }
      throw new Error(describe(body, res));
    }
    await readSse(res.body, onEvent);
  }

  /* Server-Sent Events from a fetch() body (EventSource cannot POST). */
  async function readSse(stream, onEvent) {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buf = "", carry = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let raw = carry + decoder.decode(value, { stream: true });
      carry = raw.endsWith("\r") ? "\r" : "";
      if (carry) raw = raw.slice(0, -1);
      buf += raw.replace(/\r\n?/g, "\n");
      let idx;
      while ((idx = buf.indexOf("\n\n")) >= 0) {
        dispatchSse(buf.slice(0, idx), onEvent);
        buf = buf.slice(idx + 2);
      }
    }
    if (buf.trim()) dispatchSse(buf, onEvent);
  }

  async function loadChart(ticker, asOf) {
    const status = $("chart-status");
    status.textContent = "loading…";
    status.classList.remove("error-text");
    try {
      const q = asOf ? "?as_of=" + asOf : "";
      const s = await api("/market/" + encodeURIComponent(ticker) + "/series" + q);
      window.EquiChart.render($("chart"), s, $("chart-readout"));
      status.textContent = s.ticker + " to " + s.as_of + " · " + s.dates.length + " bars · " + s.origin;
    } catch (e) {
      window.EquiChart.clear($("chart"));
      status.textContent = e.message;
      status.classList.add("error-text");
    }
  }

  function researchPayload() {
    return { ticker: $("r-ticker").value.trim().toUpperCase(), question: $("r-question").value.trim(),
             as_of: $("r-asof").value || null, provider: $("r-provider").value || null };
  }

  async function runResearch(ev) {
    ev.preventDefault();
    const payload = researchPayload();
    showError("r-error", "");
    $("progress").textContent = "";
    $("result").hidden = true;
    $("r-status").textContent = "starting…";
    $("r-run").disabled = true;
    loadChart(payload.ticker, payload.as_of);
    try {
      await postSse("/research/stream", payload, (event, data) => {
        const obj = JSON.parse(data);
        if (event === "stage") addProgress(obj, "progress", "r-status");
        else if (event === "recommendation") renderRecommendation(obj);
        else if (event === "error") showError("r-error", "Research failed (" + obj.status + "): " + obj.detail);
      });
    } catch (e) {
      showError("r-error", e.message);
      $("r-status").textContent = "failed";
    } finally {
      $("r-run").disabled = false;
      loadHealth();  // the run may have ingested filings, facts and news: refresh the header's counts
    }
  }

  /* ---------------------------------------------------------------- evidence explorer */

  function hitItem(hit) {
    const d = hit.document, sc = hit.scores;
    const scores = ["rrf " + fmtNum(sc.rrf_score, 4), sc.rerank_score !== null ? "rerank " + fmtNum(sc.rerank_score, 3)
      : sc.rerank_status, "dense #" + (sc.dense_rank || "–"), "bm25 #" + (sc.bm25_rank || "–")].join(" · ");
    return h("li", { class: "hit", data: { doc: d.doc_id, start: hit.start, end: hit.end } },
      h("div", { class: "hit-head" }, h("b", { text: "#" + hit.rank + " " + (d.ticker || "") + " " + d.form }),
        " filed " + (d.filed_at || "?") + " · " + (hit.section || "–")),
      h("p", { class: "hit-text", text: hit.text }),
      h("div", { class: "hit-foot muted" }, scores, " ",
        h("button", { class: "cite", text: "Show in filing", attrs: { type: "button" },
                      onclick: () => openPassage(d.doc_id, hit.start, hit.end) })));
  }

  async function runSearch(ev) {
    ev.preventDefault();
    showError("s-error", "");
    $("s-meta").textContent = "searching…";
    $("hits").textContent = "";
    const payload = { query: $("s-query").value, tickers: splitList($("s-tickers").value.toUpperCase()),
                      forms: splitList($("s-forms").value.toUpperCase()), since: $("s-since").value || null,
                      until: $("s-until").value || null, mode: $("s-mode").value || null,
                      top_k: $("s-k").value ? Number($("s-k").value) : null };
    try {
      const res = await postJson("/search", payload);
      const ms = Object.values(res.timings_ms || {}).reduce((a, b) => a + b, 0);
      $("s-meta").textContent = res.hits.length + " passages · mode " + res.mode + " · " + fmtNum(ms, 0) + " ms" +
        (res.auto_filter ? " · " + res.auto_filter : "") +
        (res.degraded.length ? " · degraded: " + res.degraded.join("; ") : "");
      res.hits.forEach(hit => $("hits").append(hitItem(hit)));
    } catch (e) {
      $("s-meta").textContent = "";
      showError("s-error", e.message);
    }
  }

  /* ---------------------------------------------------------------- shared with ask.js */

  window.EquiUI = { $, h, api, describe, showError, fmtNum, addProgress, postSse, fetchPassage, passageNodes,
                    openPassage, loadHealth };

  /* ---------------------------------------------------------------- wiring */

  document.addEventListener("DOMContentLoaded", () => {
    for (const tab of document.querySelectorAll("button.tab")) {
      tab.addEventListener("click", () => showPage(tab.dataset.page));
    }
    $("research-form").addEventListener("submit", runResearch);
    $("r-chart").addEventListener("click", () => {
      const p = researchPayload();
      if (p.ticker) loadChart(p.ticker, p.as_of);
    });
    $("search-form").addEventListener("submit", runSearch);
    $("p-close").addEventListener("click", () => { $("passage").hidden = true; });
    document.addEventListener("keydown", e => { if (e.key === "Escape") $("passage").hidden = true; });
    loadHealth();
  });
})();
