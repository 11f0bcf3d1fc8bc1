/* EquiMind dashboard, the Memory explorer: GET /api/v1/memory/{ticker} (optional as_of) and GET /api/v1/ledger/{ticker}.
   Shows each tier of the ticker's research memory — raw evidence, then the daily, weekly, monthly and quarterly
   summaries (how many periods, how many cited sentences, which are partial) with every summary sentence citable —,
   the past research runs, and the rating ledger where one exists (rating, conviction, evidence and figures used, the
   change from the entry before). Nothing dated after the as-of date is shown (the API's rule). Uses app.js's helpers
   (window.EquiUI); every server string is inserted as text. */
"use strict";

(function () {
  const LEVELS = ["daily", "weekly", "monthly", "quarterly"];

  function ui() { return window.EquiUI; }

  function rows(id, header, data, rowData) {
    const { $, h } = ui();
    const t = $(id);
    t.textContent = "";
    t.append(h("tr", {}, ...header.map(x => h("th", { text: x }))));
    data.forEach((r, i) => t.append(h("tr", { data: rowData ? rowData(i) : {} },
      ...r.map(x => h("td", { text: x })))));
  }

  function renderMemory(m) {
    const { $, h, openPassage, fmtNum } = ui();
    $("m-result").hidden = false;
    $("m-title").textContent = m.ticker + (m.as_of ? " as of " + m.as_of : "");
    $("m-counts").textContent = m.evidence_count + " evidence passage(s) · " + m.summaries.length +
      " period summaries · " + m.runs.length + " research run(s)" +
      (m.last_research ? " · last research as of " + m.last_research.as_of : "");
    const tiers = [["raw evidence", String(m.evidence_count), "–", "–"]];
    const keys = [{ level: "raw", periods: m.evidence_count }];
    for (const level of LEVELS) {
      const of = m.summaries.filter(s => s.level === level);
      const items = of.reduce((n, s) => n + s.items.length, 0);
      tiers.push([level, String(of.length), String(items), String(of.filter(s => s.partial).length)]);
      keys.push({ level: level, periods: of.length });
    }
    rows("m-tiers", ["tier", "periods (or passages)", "cited sentences", "partial periods"], tiers, i => keys[i]);
    const box = $("m-summaries");
    box.textContent = "";
    for (const level of LEVELS) {
      const of = m.summaries.filter(s => s.level === level);
      if (!of.length) continue;
      const det = h("details", { class: "m-level", data: { level: level } },
        h("summary", { text: level + " (" + of.length + ")" }));
      for (const s of of) {
        const list = h("ul", { class: "m-items" });
        for (const it of s.items) {
          list.append(h("li", { class: "m-item" }, h("span", { text: it.date + " · " + it.form + " · " }),
            h("button", { class: "cite", text: "Open", attrs: { type: "button" },
                          onclick: () => openPassage(it.doc_id, it.start, it.end) }),
            " " + it.text));
        }
        det.append(h("div", { class: "m-period", data: { period: s.period } },
          h("b", { text: s.period + (s.partial ? " (partial: up to the as-of date)" : "") + " " }),
          h("span", { class: "muted", text: s.start + " – " + s.end }), list));
      }
      box.append(det);
    }
    rows("m-runs", ["as of", "rating", "conviction", "question", "ran", "report"], m.runs.map(r => [r.as_of,
      r.rating || "refused", fmtNum(r.conviction, 2), r.question, r.run_at, ""]), i => ({ run: m.runs[i].id }));
    const cells = $("m-runs").querySelectorAll("tr[data-run] td:last-child");
    cells.forEach((td, i) => td.append(
      h("a", { class: "m-report", text: "printable report",
               attrs: { href: "/api/v1/report/" + m.runs[i].id, target: "_blank", rel: "noopener" } }), " · ",
      h("a", { class: "m-pdf", text: "PDF",
               attrs: { href: "/api/v1/report/" + m.runs[i].id + "/pdf", target: "_blank", rel: "noopener" } })));
  }

  function renderLedger(history) {
    const { $, fmtNum } = ui();
    if (!history) {
      $("m-ledger-note").textContent = "no rated research recorded for this ticker (up to this date): run research " +
        "to start its ledger";
      rows("m-ledger", ["as of", "rating", "conviction", "evidence", "figures", "since"], []);
      return;
    }
    $("m-ledger-note").textContent = history.rule;
    rows("m-ledger", ["as of", "rating", "conviction", "evidence", "figures", "since"], history.entries.map(row => {
      const e = row.entry;
      const c = row.change;
      const since = c ? "since " + c.since + ": " + (c.rating_from || "–") + " → " + (c.rating_to || "–") + ", " +
        c.evidence_entered.length + " evidence entered, " + c.evidence_left.length + " left" : "first entry";
      return [e.as_of, e.rating || "–", fmtNum(e.conviction, 2),
              row.evidence_count === null ? "not recorded" : String(row.evidence_count),
              row.figures_count === null ? "not recorded" : String(row.figures_count), since];
    }), i => ({ run: history.entries[i].entry.run_id }));
  }

  async function show(ev) {
    ev.preventDefault();
    const { $, api, showError } = ui();
    showError("m-error", "");
    const ticker = $("m-ticker").value.trim().toUpperCase();
    if (!ticker) {
      showError("m-error", "a ticker is required, e.g. NVDA");
      return;
    }
    const q = $("m-asof").value ? "?as_of=" + encodeURIComponent($("m-asof").value) : "";
    $("m-show").disabled = true;
    $("m-result").hidden = true;
    delete $("m-result").dataset.ticker;
    try {
      renderMemory(await api("/memory/" + encodeURIComponent(ticker) + q));
      let history = null;
      try {
        history = await api("/ledger/" + encodeURIComponent(ticker) + q);
      } catch (e) {
        if (!/no research recorded/.test(e.message)) throw e;  // 404: no ledger yet is a state, not an error
      }
      renderLedger(history);
      $("m-result").dataset.ticker = ticker;
    } catch (e) {
      showError("m-error", e.message);
    } finally {
      $("m-show").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    ui().$("memory-form").addEventListener("submit", show);
  });
})();
