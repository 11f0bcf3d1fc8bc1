/* EquiMind dashboard, the Changes page: GET /api/v1/changes/{ticker} (optional form, from, to, section, as_of) and
   the ranked changes between the two filings: each with its kind, section, summary, figures (old → new) and the old
   and new quotes, each naming its document id and character span and opening it highlighted in the filing. The
   pairing (why these two filings), the sections compared and the degraded lines are shown with them. Uses app.js's
   helpers (window.EquiUI); every server string is inserted as text, never as HTML. */
"use strict";

(function () {
  const FIRST = 25;  // changes drawn at first; "Show all" draws the rest
  const KIND_LABEL = { added: "added", removed: "removed", reworded: "reworded", figures_changed: "figures changed" };

  function ui() { return window.EquiUI; }

  /* The query string of the form's values (nothing for an empty field; one section= per ticked box). */
  function changesQuery() {
    const $ = ui().$;
    const q = new URLSearchParams();
    if ($("c-form").value) q.set("form", $("c-form").value);
    if ($("c-from").value.trim()) q.set("from", $("c-from").value.trim());
    if ($("c-to").value.trim()) q.set("to", $("c-to").value.trim());
    if ($("c-asof").value) q.set("as_of", $("c-asof").value);
    for (const box of document.querySelectorAll("#changes-form input[name=section]:checked")) {
      q.append("section", box.value);
    }
    const s = q.toString();
    return s ? "?" + s : "";
  }

  function where(side) { return side.doc_id.slice(0, 12) + ":" + side.start + "-" + side.end; }

  /* One side of a change: "old · doc:start-end · Open in filing", then the quoted span. */
  function sideBlock(name, side) {
    const { h, openPassage } = ui();
    return h("div", { class: "c-side c-" + name, data: { side: name, doc: side.doc_id, start: side.start,
                                                         end: side.end } },
      h("div", { class: "c-side-meta muted" }, h("b", { text: name }), " · ",
        h("code", { class: "c-where", text: where(side), attrs: { title: side.doc_id } }), " · " + side.section + " ",
        h("button", { class: "cite", text: "Open in filing", attrs: { type: "button" },
                      onclick: () => openPassage(side.doc_id, side.start, side.end) })),
      h("blockquote", { class: "c-quote", text: side.quote }));
  }

  function changeItem(c) {
    const { h, fmtNum } = ui();
    const head = h("div", { class: "c-head" }, h("b", { text: c.rank + "." }), " ",
      h("span", { class: "c-kind", text: KIND_LABEL[c.kind] || c.kind, data: { kind: c.kind } }),
      " · " + c.section + (c.is_risk_factor ? " · whole risk factor" : ""));
    if (c.similarity !== null && c.similarity !== undefined) head.append(" · similarity " + fmtNum(c.similarity, 2));
    const li = h("li", { class: "c-change", data: { kind: c.kind, rank: c.rank } }, head);
    if (c.risk_factor && !c.is_risk_factor) {
      li.append(h("div", { class: "c-factor muted", text: "under “" + c.risk_factor + "”" }));
    }
    li.append(h("p", { class: "c-summary", text: c.summary }));
    for (const f of c.figures || []) {
      const rel = f.relative === null || f.relative === undefined ? "" : " (" + fmtNum(100 * f.relative, 1) + "%)";
      li.append(h("span", { class: "figure-chip", text: f.old_text + " → " + f.new_text + rel }));
    }
    if (c.old) li.append(sideBlock("old", c.old));
    if (c.new) li.append(sideBlock("new", c.new));
    return li;
  }

  function renderSections(sections) {
    const { $, h } = ui();
    const table = $("c-sections");
    table.textContent = "";
    table.append(h("tr", {}, ...["section", "old", "new", "mode", "paragraphs", "unchanged", "note"]
      .map(t => h("th", { text: t }))));
    for (const s of sections) {
      table.append(h("tr", { data: { key: s.key } }, h("td", { text: s.key }), h("td", { text: s.old_name || "–" }),
        h("td", { text: s.new_name || "–" }), h("td", { text: s.mode }),
        h("td", { text: s.old_paragraphs + " → " + s.new_paragraphs }), h("td", { text: s.unchanged }),
        h("td", { text: s.note || "" })));
    }
  }

  function renderDegraded(lines) {
    const { $, h } = ui();
    const box = $("c-degraded");
    box.textContent = "";
    if (lines && lines.length) {
      box.append(h("h4", { text: "Degraded" }), h("ul", {}, ...lines.map(d => h("li", { text: d }))));
    }
  }

  function renderChanges(list, changes, upTo) {
    list.textContent = "";
    changes.slice(0, upTo).forEach(c => list.append(changeItem(c)));
  }

  function renderReport(r) {
    const { $ } = ui();
    const result = $("c-result");
    result.hidden = false;
    $("c-title").textContent = (r.company || r.ticker || "") + ": " + r.old.title + " → " + r.new.title;
    $("c-pairing").textContent = r.pairing;
    const counts = Object.entries(r.counts || {}).filter(([, v]) => v).map(([k, v]) => v + " " + k.replace(/_/g, " "));
    $("c-counts").textContent = r.changes.length + " changes (" + (counts.join(", ") || "none") + ") · " +
      r.dates_only + " sentence(s) changed only a year · " + r.citations_checked + " cited spans checked, " +
      r.citations_failed + " failed" + (r.as_of ? " · as of " + r.as_of : "");
    $("c-rule").textContent = r.ranking_rule;
    renderSections(r.sections || []);
    renderDegraded(r.degraded);
    const list = $("c-changes");
    renderChanges(list, r.changes, FIRST);
    const more = $("c-more");
    more.hidden = r.changes.length <= FIRST;
    more.textContent = "Show all " + r.changes.length;
    more.onclick = () => { renderChanges(list, r.changes, r.changes.length); more.hidden = true; };
    result.dataset.count = String(r.changes.length);
  }

  async function runChanges(ev) {
    ev.preventDefault();
    const { $, api, showError, loadHealth } = ui();
    showError("c-error", "");
    const ticker = $("c-ticker").value.trim();
    $("c-result").hidden = true;
    delete $("c-result").dataset.count;
    if (!ticker) {
      showError("c-error", "a ticker is required, e.g. NVDA");
      return;
    }
    $("c-run").disabled = true;
    try {
      renderReport(await api("/changes/" + encodeURIComponent(ticker) + changesQuery()));
    } catch (e) {
      showError("c-error", e.message);
    } finally {
      $("c-run").disabled = false;
      loadHealth();  // the comparison may have fetched filings: refresh the header's counts
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    ui().$("changes-form").addEventListener("submit", runChanges);
  });
})();
