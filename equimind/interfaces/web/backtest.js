/* EquiMind dashboard, the Backtest page: the stored runs (GET /api/v1/backtest), one run's report
   (GET /api/v1/backtest/{id}): its accuracy table, the calibration of conviction per horizon (hit rate per conviction
   bucket and per rating with Wilson intervals, the Brier scores and the verdict in words) and its two plots
   (reliability.png, equity.png). Uses app.js's helpers (window.EquiUI); every server string is inserted as text. */
"use strict";

(function () {
  function ui() { return window.EquiUI; }

  function num(v, digits) { return v === null || v === undefined ? "n/a" : ui().fmtNum(v, digits); }
  function ci(pair) { return pair ? " [" + num(pair[0], 2) + ", " + num(pair[1], 2) + "]" : ""; }
  function pct(v) { return v === null || v === undefined ? "n/a" : (v >= 0 ? "+" : "") + (100 * v).toFixed(1) + "%"; }

  function table(id, header, rows, rowData) {
    const { $, h } = ui();
    const t = $(id);
    t.textContent = "";
    t.append(h("tr", {}, ...header.map(x => h("th", { text: x }))));
    rows.forEach((r, i) => t.append(h("tr", { data: rowData ? rowData(i) : {} }, ...r.map(x => h("td", { text: x })))));
  }

  function renderReport(r) {
    const { $, h } = ui();
    $("b-result").hidden = false;
    const req = r.request;
    $("b-title").textContent = "Backtest " + r.run_id;
    $("b-summary").textContent = req.tickers.join(", ") + " · " + req.frequency + " " + req.start + " to " + req.end +
      " · " + r.n_rated + " rated of " + r.n_decisions + " decisions · prices through " + r.data_end;
    table("b-accuracy", ["horizon", "n scored", "hit rate (n) [CI]", "base rate up", "IC [CI]", "long-short [CI]"],
      r.table.map(x => [x.horizon_months + "m", String(x.n_scored), num(x.hit_rate, 2) + " (" + x.n_directional + ")" +
        ci(x.hit_rate_ci), num(x.base_rate_up, 2), num(x.ic, 2) + ci(x.ic_ci), pct(x.long_short_mean)]));
    const rows = [];
    const keys = [];
    for (const [horizon, block] of Object.entries(r.calibration || {})) {
      for (const [kind, cells] of [["conviction", block.buckets], ["rating", block.by_rating]]) {
        for (const c of cells) {
          rows.push([horizon + "m", kind + " " + c.label, String(c.n), c.rate === null ? "n/a" : num(c.rate, 2) +
            ci(c.ci), num(c.mean_conviction, 2)]);
          keys.push({ horizon: horizon, group: kind + " " + c.label, n: c.n });
        }
      }
    }
    table("b-calibration", ["horizon", "group", "n", "hit rate [95% Wilson CI]", "mean conviction"], rows,
      i => keys[i]);
    const verdicts = $("b-verdicts");
    verdicts.textContent = "";
    for (const [horizon, b] of Object.entries(r.calibration || {})) {
      verdicts.append(h("li", { data: { horizon: horizon }, text: horizon + "m: Brier " + num(b.brier, 3) +
        " (coin flip " + num(b.brier_coin_flip, 3) + ", climatology " + num(b.brier_climatology, 3) + ", skill " +
        num(b.brier_skill, 3) + "); monotone map: " + b.monotone_map.reason + ". " + b.verdict }));
    }
    const base = "/api/v1/backtest/" + encodeURIComponent(r.run_id);
    $("b-reliability").src = base + "/reliability.png";
    $("b-equity").src = base + "/equity.png";
    $("b-result").dataset.run = r.run_id;
  }

  async function loadRuns() {
    const { $, h, api, showError } = ui();
    showError("b-error", "");
    const select = $("b-run");
    try {
      const list = await api("/backtest");
      select.textContent = "";
      if (!list.runs.length) {
        select.append(h("option", { text: "no stored runs: run `equimind backtest` or POST /api/v1/backtest",
                                    attrs: { value: "" } }));
      }
      for (const run of list.runs) {
        select.append(h("option", { attrs: { value: run.run_id }, text: run.run_id + " · " + run.tickers.join(",") +
          " · " + run.start + ".." + run.end + " · " + run.predictions + " decisions (" + run.status + ")" }));
      }
      select.dataset.count = String(list.runs.length);
    } catch (e) {
      showError("b-error", e.message);
    }
  }

  async function show(ev) {
    ev.preventDefault();
    const { $, api, showError } = ui();
    showError("b-error", "");
    const id = $("b-run").value;
    if (!id) {
      showError("b-error", "choose a stored run (none yet: run `equimind backtest` first)");
      return;
    }
    $("b-show").disabled = true;
    try {
      renderReport(await api("/backtest/" + encodeURIComponent(id)));
    } catch (e) {
      showError("b-error", e.message);
    } finally {
      $("b-show").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const { $ } = ui();
    $("backtest-form").addEventListener("submit", show);
    $("b-refresh").addEventListener("click", loadRuns);
    $("tab-backtest").addEventListener("click", loadRuns);
  });
})();
