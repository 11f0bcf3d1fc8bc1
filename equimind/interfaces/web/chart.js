/* EquiMind price chart, drawn with TradingView's lightweight-charts v5 (vendored under vendor/lightweight-charts/,
   loaded before this file as the global LightweightCharts). One chart, three panes on one time scale, so zoom,
   scroll and the crosshair always agree across them:
     price  — daily candles, SMA 20/50/200, Bollinger(20, 2), volume at the foot;
     rsi    — RSI(14) with the 30/70 guides;
     macd   — MACD(12, 26), its signal(9) line and histogram.
   The series come from GET /api/v1/market/{ticker}/series (oldest first; null = not yet defined). */
"use strict";

(function () {
  const COLORS = { up: "#16a34a", down: "#dc2626", sma_20: "#f59e0b", sma_50: "#10b981", sma_200: "#8b5cf6",
                   bb: "#60a5fa", bb_middle: "#93c5fd", rsi_14: "#7c3aed", macd: "#1d4ed8", macd_signal: "#f97316",
                   guide: "#ef4444", grid: "#eef0f3", line: "#d9dde3", ink: "#1f2933" };
  const OVERLAYS = [["bb_upper", COLORS.bb], ["bb_lower", COLORS.bb], ["bb_middle", COLORS.bb_middle],
                    ["sma_200", COLORS.sma_200], ["sma_50", COLORS.sma_50], ["sma_20", COLORS.sma_20]];
  const PANES = [["price", 5], ["rsi", 1.6], ["macd", 2]];  // name, stretch factor
  let current = null;

  /* One line point per bar; a null value becomes whitespace data (a gap in the line). */
  function points(dates, values) {
    return dates.map((d, i) => (values[i] === null || values[i] === undefined ? { time: d }
                                                                               : { time: d, value: values[i] }));
  }

  function fmt(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    return v.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  }

  function fmtVolume(v) {
    if (!Number.isFinite(v) || v <= 0) return "–";
    return v >= 1e9 ? fmt(v / 1e9, 2) + "B" : v >= 1e6 ? fmt(v / 1e6, 1) + "M" : fmt(v, 0);
  }

  function chartOptions(L) {
    return {
      autoSize: true,
      // the logo injects an inline <style> the page's CSP refuses; the page links TradingView under the chart instead
      layout: { background: { type: L.ColorType.Solid, color: "#ffffff" }, textColor: COLORS.ink, fontSize: 11,
                attributionLogo: false,
                panes: { separatorColor: COLORS.line, separatorHoverColor: "#c7d2fe", enableResize: true } },
      grid: { vertLines: { color: COLORS.grid }, horzLines: { color: COLORS.grid } },
      crosshair: { mode: L.CrosshairMode.Normal },
      rightPriceScale: { borderColor: COLORS.line },
      timeScale: { borderColor: COLORS.line, rightOffset: 3, minBarSpacing: 1 },
    };
  }

  const quiet = { priceLineVisible: false, lastValueVisible: false, crosshairMarkerRadius: 3 };

  function addPrice(L, chart, s) {
    const series = {};
    series.candles = chart.addSeries(L.CandlestickSeries, {
      upColor: COLORS.up, downColor: COLORS.down, wickUpColor: COLORS.up, wickDownColor: COLORS.down,
      borderVisible: false }, 0);
    series.candles.setData(s.dates.map((d, i) => ({ time: d, open: s.open[i], high: s.high[i], low: s.low[i],
                                                    close: s.close[i] })));
    series.candles.priceScale().applyOptions({ scaleMargins: { top: 0.06, bottom: 0.2 } });
    for (const [key, color] of OVERLAYS) {
      const mid = key === "bb_middle";
      series[key] = chart.addSeries(L.LineSeries, { ...quiet, color: color, lineWidth: mid ? 1 : 1.5,
        lineStyle: mid ? L.LineStyle.Dashed : L.LineStyle.Solid, crosshairMarkerVisible: false }, 0);
      series[key].setData(points(s.dates, s[key]));
    }
    if (s.volume.some(v => v > 0)) {
      series.volume = chart.addSeries(L.HistogramSeries, { ...quiet, priceScaleId: "volume",
        priceFormat: { type: "volume" } }, 0);
      series.volume.setData(s.dates.map((d, i) => ({ time: d, value: s.volume[i],
        color: s.close[i] >= s.open[i] ? "rgba(22, 163, 74, 0.28)" : "rgba(220, 38, 38, 0.28)" })));
      chart.priceScale("volume", 0).applyOptions({ scaleMargins: { top: 0.84, bottom: 0 } });
    }
    return series;
  }

  function addIndicators(L, chart, s, series) {
    series.rsi_14 = chart.addSeries(L.LineSeries, { ...quiet, color: COLORS.rsi_14, lineWidth: 1.5,
      lastValueVisible: true, priceFormat: { type: "price", precision: 1, minMove: 0.1 },
      autoscaleInfoProvider: () => ({ priceRange: { minValue: 0, maxValue: 100 } }) }, 1);
    series.rsi_14.setData(points(s.dates, s.rsi_14));
    for (const level of [30, 70]) {
      series.rsi_14.createPriceLine({ price: level, color: COLORS.guide, lineWidth: 1, lineStyle: L.LineStyle.Dashed,
                                      axisLabelVisible: true, title: "" });
    }
    series.macd_hist = chart.addSeries(L.HistogramSeries, { ...quiet }, 2);
    series.macd_hist.setData(s.dates.map((d, i) => (s.macd_hist[i] === null ? { time: d }
      : { time: d, value: s.macd_hist[i], color: s.macd_hist[i] >= 0 ? "#86efac" : "#fca5a5" })));
    series.macd = chart.addSeries(L.LineSeries, { ...quiet, color: COLORS.macd, lineWidth: 1.5 }, 2);
    series.macd.setData(points(s.dates, s.macd));
    series.macd_signal = chart.addSeries(L.LineSeries, { ...quiet, color: COLORS.macd_signal, lineWidth: 1.5 }, 2);
    series.macd_signal.setData(points(s.dates, s.macd_signal));
  }

  /* Call done() once every pane has its element (the library adds them on its first paint). */
  function whenPanesReady(chart, done, frames) {
    const left = frames === undefined ? 60 : frames;
    if (!current || current.chart !== chart) return;  // replaced by a newer chart meanwhile
    if (chart.panes().every(p => p.getHTMLElement())) done();
    else if (left > 0) requestAnimationFrame(() => whenPanesReady(chart, done, left - 1));
    else console.error("lightweight-charts created no element for some panes; the pane legends are missing");
  }

  /* Name each pane's element (data-pane) and add its legend. */
  function labelPanes(chart) {
    const legends = { price: [["close", COLORS.ink], ["SMA 20", COLORS.sma_20], ["SMA 50", COLORS.sma_50],
                              ["SMA 200", COLORS.sma_200], ["Bollinger 20, 2", COLORS.bb], ["volume", "#9ca3af"]],
                      rsi: [["RSI 14", COLORS.rsi_14], ["30 / 70", COLORS.guide]],
                      macd: [["MACD 12, 26", COLORS.macd], ["signal 9", COLORS.macd_signal],
                             ["histogram", "#4ade80"]] };
    chart.panes().forEach((pane, i) => {
      const name = PANES[i][0];
      const cell = pane.getHTMLElement();
      if (!cell) return;
      cell.dataset.pane = name;
      const box = document.createElement("div");
      box.className = "chart-legend";
      for (const [label, color] of legends[name]) {
        const key = document.createElement("span");
        key.className = "key";
        key.style.background = color;
        box.append(key, label);
      }
      const host = cell.querySelector("div") || cell;
      host.style.position = "relative";
      host.append(box);
    });
  }

  function readoutText(s, i) {
    return s.dates[i] + "  O " + fmt(s.open[i], 2) + " H " + fmt(s.high[i], 2) + " L " + fmt(s.low[i], 2) +
      " C " + fmt(s.close[i], 2) + "  vol " + fmtVolume(s.volume[i]) + "  SMA20 " + fmt(s.sma_20[i], 2) +
      "  SMA50 " + fmt(s.sma_50[i], 2) + "  SMA200 " + fmt(s.sma_200[i], 2) + "  BB " + fmt(s.bb_lower[i], 2) +
      "–" + fmt(s.bb_upper[i], 2) + "  RSI " + fmt(s.rsi_14[i], 1) + "  MACD " + fmt(s.macd[i], 2) + " / " +
      fmt(s.macd_signal[i], 2);
  }

  function follow(chart, s, container, readout) {
    const index = new Map(s.dates.map((d, i) => [String(d), i]));
    const show = i => {
      container.dataset.crosshair = s.dates[i];
      if (readout) readout.textContent = readoutText(s, i);
    };
    chart.subscribeCrosshairMove(param => {
      const i = param.time === undefined ? undefined : index.get(String(param.time));
      show(i === undefined ? s.dates.length - 1 : i);
    });
    show(s.dates.length - 1);
  }

  function destroy() {
    if (current) current.chart.remove();
    current = null;
  }

  function render(container, s, readout) {
    clear(container);
    const L = window.LightweightCharts;
    if (!L || typeof L.createChart !== "function") {
      container.textContent = "The chart library did not load: /static/vendor/lightweight-charts/ is missing " +
        "from the installed package (reinstall EquiMind).";
      return null;
    }
    if (s.dates.length < 2) {
      container.textContent = "Not enough price bars to draw a chart.";
      return null;
    }
    const chart = L.createChart(container, chartOptions(L));
    const series = addPrice(L, chart, s);
    addIndicators(L, chart, s, series);
    chart.panes().forEach((pane, i) => pane.setStretchFactor(PANES[i][1]));
    chart.timeScale().fitContent();
    follow(chart, s, container, readout);
    container.setAttribute("aria-label", s.ticker + " candles, SMA, Bollinger bands, volume, RSI and MACD to " +
                           s.as_of);
    current = { chart: chart, series: series, data: s };
    whenPanesReady(chart, () => {
      labelPanes(chart);
      container.dataset.bars = String(s.dates.length);  // drawn and labelled: what the browser tests wait for
    });
    return current;
  }

  function clear(container) {
    destroy();
    container.textContent = "";
    delete container.dataset.bars;
  }

  window.EquiChart = { render: render, clear: clear, current: () => current };
})();
