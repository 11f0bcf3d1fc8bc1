/* EquiMind price chart: plain SVG, no library. Three stacked panels sharing one x axis (trading days):
   price with SMA 20/50/200 and Bollinger(20, 2) bands, RSI(14) with the 30/70 guides, MACD(12, 26, 9) with its
   signal line and histogram. The series come from GET /api/v1/market/{ticker}/series (nulls = not yet defined). */
"use strict";

(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const W = 900, LEFT = 8, RIGHT = 58, GAP = 14;
  const PANELS = [
    { id: "price", height: 250 },
    { id: "rsi", height: 95 },
    { id: "macd", height: 115 },
  ];

  function el(name, attrs, parent) {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  function text(parent, x, y, content, cls, anchor) {
    const t = el("text", { x: x, y: y, class: cls || "axis-label", "text-anchor": anchor || "start" }, parent);
    t.textContent = content;
    return t;
  }

  function extent(arrays) {
    let lo = Infinity, hi = -Infinity;
    for (const arr of arrays) for (const v of arr) {
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (!Number.isFinite(lo)) return [0, 1];
    if (lo === hi) return [lo - 1, hi + 1];
    const pad = (hi - lo) * 0.05;
    return [lo - pad, hi + pad];
  }

  function niceTicks(lo, hi, count) {
    const raw = (hi - lo) / Math.max(1, count);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw) || raw;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(Number(v.toFixed(10)));
    return out;
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    return v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  }

  /* A path through the defined points; a null starts a new segment. */
  function linePath(values, x, y) {
    let d = "", pen = false;
    values.forEach((v, i) => {
      if (v === null || v === undefined) { pen = false; return; }
      d += (pen ? "L" : "M") + x(i).toFixed(1) + " " + y(v).toFixed(1);
      pen = true;
    });
    return d;
  }

  /* The band between upper and lower where both are defined (one closed polygon per defined run). */
  function bandPath(upper, lower, x, y) {
    let d = "", run = [];
    const flush = () => {
      if (run.length > 1) {
        d += "M" + run.map(i => x(i).toFixed(1) + " " + y(upper[i]).toFixed(1)).join("L");
        d += "L" + run.slice().reverse().map(i => x(i).toFixed(1) + " " + y(lower[i]).toFixed(1)).join("L") + "Z";
      }
      run = [];
    };
    upper.forEach((u, i) => (u === null || lower[i] === null) ? flush() : run.push(i));
    flush();
    return d;
  }

  function yAxis(g, lo, hi, y, top, height, digits) {
    for (const t of niceTicks(lo, hi, Math.max(2, Math.round(height / 45)))) {
      const yy = y(t);
      if (yy < top + 4 || yy > top + height - 2) continue;
      el("line", { x1: LEFT, x2: W - RIGHT, y1: yy, y2: yy, class: "grid" }, g);
      text(g, W - RIGHT + 4, yy + 4, fmt(t, digits));
    }
  }

  function legend(g, top, items) {
    let x = LEFT + 6;
    for (const [cls, label] of items) {
      el("rect", { x: x, y: top + 5, width: 10, height: 3, class: "key " + cls }, g);
      text(g, x + 14, top + 11, label, "legend");
      x += 20 + label.length * 6.2;
    }
  }

  function monthTicks(g, dates, x, yTop, yBottom) {
    const n = dates.length;
    const months = Math.max(1, Math.round(n / 21));
    const every = months > 24 ? 6 : months > 12 ? 3 : months > 6 ? 2 : 1;
    let last = "";
    dates.forEach((d, i) => {
      const ym = d.slice(0, 7);
      if (ym === last) return;
      last = ym;
      const m = Number(d.slice(5, 7));
      if ((m - 1) % every !== 0 || i === 0) return;
      el("line", { x1: x(i), x2: x(i), y1: yTop, y2: yBottom, class: "grid" }, g);
      text(g, x(i), yBottom + 12, m === 1 ? d.slice(0, 4) : d.slice(0, 7), "axis-label", "middle");
    });
  }

  function panel(svg, id, top, height) {
    const g = el("g", { "data-panel": id, class: "panel" }, svg);
    el("rect", { x: LEFT, y: top, width: W - LEFT - RIGHT, height: height, class: "frame" }, g);
    return g;
  }

  function drawPrice(svg, s, x, top, height) {
    const g = panel(svg, "price", top, height);
    const [lo, hi] = extent([s.low, s.high, s.bb_lower, s.bb_upper, s.sma_200]);
    const y = v => top + height - (v - lo) / (hi - lo) * height;
    yAxis(g, lo, hi, y, top, height, 0);
    el("path", { d: bandPath(s.bb_upper, s.bb_lower, x, y), class: "band", "data-series": "bollinger" }, g);
    const lines = [["bb_upper", "s-bb"], ["bb_lower", "s-bb"], ["bb_middle", "s-bbmid"], ["sma_200", "s-sma200"],
                   ["sma_50", "s-sma50"], ["sma_20", "s-sma20"], ["close", "s-close"]];
    for (const [key, cls] of lines) {
      el("path", { d: linePath(s[key], x, y), class: "line " + cls, "data-series": key }, g);
    }
    legend(g, top, [["s-close", "close"], ["s-sma20", "SMA 20"], ["s-sma50", "SMA 50"], ["s-sma200", "SMA 200"],
                    ["s-bb", "Bollinger 20, 2"]]);
    return y;
  }

  function drawRsi(svg, s, x, top, height) {
    const g = panel(svg, "rsi", top, height);
    const y = v => top + height - v / 100 * height;
    for (const level of [30, 50, 70]) {
      el("line", { x1: LEFT, x2: W - RIGHT, y1: y(level), y2: y(level), class: level === 50 ? "grid" : "guide" }, g);
      text(g, W - RIGHT + 4, y(level) + 4, String(level));
    }
    el("path", { d: linePath(s.rsi_14, x, y), class: "line s-rsi", "data-series": "rsi_14" }, g);
    legend(g, top, [["s-rsi", "RSI 14"]]);
    return y;
  }

  function drawMacd(svg, s, x, top, height, step) {
    const g = panel(svg, "macd", top, height);
    const [lo0, hi0] = extent([s.macd, s.macd_signal, s.macd_hist]);
    const m = Math.max(Math.abs(lo0), Math.abs(hi0));
    const y = v => top + height / 2 - v / m * (height / 2);
    yAxis(g, -m, m, y, top, height, 1);
    const bars = el("g", { "data-series": "macd_hist" }, g);
    const w = Math.max(1, step * 0.7);
    s.macd_hist.forEach((v, i) => {
      if (v === null) return;
      const y0 = y(0), y1 = y(v);
      el("rect", { x: x(i) - w / 2, y: Math.min(y0, y1), width: w, height: Math.max(0.5, Math.abs(y1 - y0)),
                   class: v >= 0 ? "hist-up" : "hist-down" }, bars);
    });
    el("path", { d: linePath(s.macd, x, y), class: "line s-macd", "data-series": "macd" }, g);
    el("path", { d: linePath(s.macd_signal, x, y), class: "line s-signal", "data-series": "macd_signal" }, g);
    legend(g, top, [["s-macd", "MACD 12, 26"], ["s-signal", "signal 9"], ["hist-up", "histogram"]]);
    return y;
  }

  function readoutText(s, i) {
    return s.dates[i] + "  close " + fmt(s.close[i], 2) + "  SMA20 " + fmt(s.sma_20[i], 2) + "  SMA50 " +
      fmt(s.sma_50[i], 2) + "  SMA200 " + fmt(s.sma_200[i], 2) + "  BB " + fmt(s.bb_lower[i], 2) + "–" +
      fmt(s.bb_upper[i], 2) + "  RSI " + fmt(s.rsi_14[i], 1) + "  MACD " + fmt(s.macd[i], 2) + " / " +
      fmt(s.macd_signal[i], 2);
  }

  function hover(svg, s, x, total, readout) {
    const cross = el("line", { x1: -10, x2: -10, y1: 0, y2: total, class: "cross" }, svg);
    const overlay = el("rect", { x: LEFT, y: 0, width: W - LEFT - RIGHT, height: total, class: "overlay" }, svg);
    const n = s.dates.length;
    const show = i => {
      cross.setAttribute("x1", x(i));
      cross.setAttribute("x2", x(i));
      if (readout) readout.textContent = readoutText(s, i);
    };
    overlay.addEventListener("mousemove", ev => {
      const box = svg.getBoundingClientRect();
      const px = (ev.clientX - box.left) / box.width * W;
      const i = Math.round((px - LEFT) / (W - LEFT - RIGHT) * (n - 1));
      show(Math.min(n - 1, Math.max(0, i)));
    });
    show(n - 1);
  }

  function render(container, s, readout) {
    container.textContent = "";
    const n = s.dates.length;
    if (n < 2) {
      container.textContent = "Not enough price bars to draw a chart.";
      return null;
    }
    const total = PANELS.reduce((a, p) => a + p.height + GAP, 0) + 18;
    const svg = el("svg", { viewBox: "0 0 " + W + " " + total, class: "chart-svg", role: "img",
                            "aria-label": s.ticker + " price, SMA, Bollinger bands, RSI and MACD to " + s.as_of });
    const step = (W - LEFT - RIGHT) / (n - 1);
    const x = i => LEFT + i * step;
    let top = 4;
    const tops = {};
    for (const p of PANELS) { tops[p.id] = top; top += p.height + GAP; }
    drawPrice(svg, s, x, tops.price, PANELS[0].height);
    drawRsi(svg, s, x, tops.rsi, PANELS[1].height);
    drawMacd(svg, s, x, tops.macd, PANELS[2].height, step);
    monthTicks(el("g", { class: "x-axis" }, svg), s.dates, x, 4, total - 16);
    hover(svg, s, x, total - 16, readout);
    container.appendChild(svg);
    return svg;
  }

  window.EquiChart = { render: render };
})();
