/* logratio report: the trend chart (uPlot), its controls and tooltip, and the
   tables' sort, filter and "show all". Reads the JSON in #report-data; requests
   nothing. Inlined by html_report.cpp in a CDATA section: never write the
   three characters that close one. window.logratioReport exposes the plot
   and its state (tests/browser/check_page.py reads them). */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var R = (window.logratioReport = { data: D, plot: null, lines: [], state: { log: false, runs: !D.many, hidden: {} } });

  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
    return String(Number(v.toPrecision(4)));
  }
  function colour(g) { return D.colors[g % D.colors.length]; }
  function groupName(g) { return g < D.groups.length ? D.groups[g] : "?"; }

  /* The lines to draw: every run, or per group its 90%, median and 10% lines. */
  function chartLines(state) {
    var out = [];
    if (state.runs) {
      D.runs.forEach(function (r) { out.push({ label: r.n, g: r.g, kind: "run", x: D.xs[r.x], y: r.y }); });
    } else {
      D.bands.forEach(function (b) {
        var n = groupName(b.g);
        out.push({ label: n + " 90%", g: b.g, kind: "hi", x: b.x, y: b.hi, n: b.n });
        out.push({ label: n + " median", g: b.g, kind: "mid", x: b.x, y: b.mid, n: b.n });
        out.push({ label: n + " 10%", g: b.g, kind: "lo", x: b.x, y: b.lo, n: b.n });
      });
    }
    return out;
  }

  /* uPlot's aligned columns over the union of the steps. A step a line has no
     sample at stays undefined (uPlot joins across it); a missing value is null
     (a gap: never interpolated). On the log scale values <= 0 are gaps too. */
  function alignedData(lines, log) {
    var seen = new Map(), xs = [];
    lines.forEach(function (l) {
      for (var k = 0; k < l.x.length; k++) if (!seen.has(l.x[k])) { seen.set(l.x[k], 0); xs.push(l.x[k]); }
    });
    xs.sort(function (a, b) { return a - b; });
    var at = new Map();
    xs.forEach(function (v, i) { at.set(v, i); });
    var data = [xs];
    lines.forEach(function (l) {
      var col = new Array(xs.length).fill(undefined);
      for (var k = 0; k < l.x.length; k++) {
        var y = l.y[k];
        if (y !== null && log && !(y > 0)) y = null;
        col[at.get(l.x[k])] = y;
      }
      data.push(col);
    });
    return data;
  }

  /* A value with gaps (or the ends) on both sides draws no line: a dot, so it
     is seen. undefined (no sample at that step) is skipped over. */
  function isolated(u, si) {
    var col = u.data[si], out = [], prev = null;
    for (var i = 0; i < col.length; i++) {
      var v = col[i];
      if (v === undefined) continue;
      if (v !== null && prev === null) {
        var j = i + 1;
        while (j < col.length && col[j] === undefined) j++;
        if (j >= col.length || col[j] === null) out.push(i);
      }
      prev = v;
    }
    return out;
  }

  function seriesOpts(lines, state) {
    var many = lines.length > 300;
    var s = [{ label: D.axis, value: function (u, v) { return v === null || v === undefined ? "-" : fmt(v); } }];
    lines.forEach(function (l) {
      var band = l.kind === "hi" || l.kind === "lo";
      s.push({
        label: l.label, stroke: colour(l.g), width: l.kind === "mid" ? 2.2 : band ? 0.6 : many ? 0.8 : 1.4,
        alpha: many ? 0.5 : 1, spanGaps: false, show: !state.hidden[l.g],
        points: l.kind === "run" ? { show: true, size: 4, space: 0, fill: colour(l.g), filter: isolated } : { show: false },
        value: function (u, v) { return fmt(v); }
      });
    });
    return s;
  }

  function bandsOpts(lines) {
    var b = [];
    lines.forEach(function (l, i) {
      if (l.kind === "hi") b.push({ series: [i + 1, i + 3], fill: colour(l.g) + "2e" });
    });
    return b;
  }

  /* The tooltip: the visible line nearest the cursor at the hovered step. */
  function showTip(u) {
    var tip = R.tip, i = u.cursor.idx;
    if (i === null || i === undefined || u.cursor.left < 0) { tip.style.display = "none"; return; }
    var best = -1, dist = Infinity;
    for (var s = 1; s < u.series.length; s++) {
      var v = u.data[s][i];
      if (!u.series[s].show || v === null || v === undefined) continue;
      var d = Math.abs(u.valToPos(v, "y") - u.cursor.top);
      if (d < dist) { dist = d; best = s; }
    }
    if (best < 0 || dist > 60) { tip.style.display = "none"; return; }
    R.tipSeries = best;
    var l = R.lines[best - 1], x = u.data[0][i], y = u.data[best][i];
    var head = l.kind === "run" ? "run " + l.label + " (" + groupName(l.g) + ")"
      : groupName(l.g) + ": " + { hi: "90th percentile", mid: "median", lo: "10th percentile" }[l.kind] + " of its runs";
    var text = head + "\n" + D.axis + " " + fmt(x) + ": " + D.metric + " " + fmt(y);
    if (l.n) text += "\n" + l.n[l.x.indexOf(x)] + " runs at this " + D.axis;
    tip.textContent = text;
    tip.style.display = "block";
    var left = u.valToPos(x, "x") + u.over.offsetLeft + 12, top = u.valToPos(y, "y") + u.over.offsetTop + 12;
    if (left + tip.offsetWidth > u.root.offsetWidth) left -= tip.offsetWidth + 24;
    tip.style.left = left + "px";
    tip.style.top = top + "px";
  }

  function draw() {
    var el = document.getElementById("trend-plot");
    if (R.plot) R.plot.destroy();
    var state = R.state, lines = (R.lines = chartLines(state));
    var few = lines.length <= 300;
    var opts = {
      width: Math.max(320, el.clientWidth), height: 320,
      scales: { x: { time: false }, y: state.log ? { distr: 3, log: 10 } : { distr: 1 } },
      axes: [{ label: D.axis, labelSize: 18 }, { label: D.metric, size: 64, labelSize: 18 }],
      series: seriesOpts(lines, state), bands: bandsOpts(lines),
      legend: { show: few, live: true, markers: { fill: function (u, i) { return colour(R.lines[i - 1].g); } } },
      cursor: { drag: { x: true, y: false }, focus: { prox: few ? 24 : -1 } },
      focus: { alpha: few ? 0.35 : 1 },
      hooks: { setCursor: [showTip] }
    };
    R.plot = new uPlot(opts, alignedData(lines, state.log), el);
    R.plot.over.appendChild(R.tip);
    R.tip.style.display = "none";
  }

  function setGroupShown(g, show) {
    var u = R.plot;
    R.state.hidden[g] = !show;
    u.batch(function () {
      R.lines.forEach(function (l, i) { if (l.g === g && u.series[i + 1].show !== show) u.setSeries(i + 1, { show: show }); });
    });
  }

  function button(text, title, onclick) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.title = title;
    b.addEventListener("click", onclick);
    return b;
  }

  function checkbox(text, checked, onchange) {
    var l = document.createElement("label"), c = document.createElement("input");
    c.type = "checkbox";
    c.checked = checked;
    c.addEventListener("change", function () { onchange(c.checked); });
    l.appendChild(c);
    l.appendChild(document.createTextNode(" " + text));
    return l;
  }

  function controls() {
    var bar = document.getElementById("trend-controls");
    bar.appendChild(checkbox("log scale", false, function (on) { R.state.log = on; draw(); }));
    if (D.many) {
      bar.appendChild(checkbox("show the " + D.runs.length + " runs", R.state.runs, function (on) { R.state.runs = on; draw(); }));
    }
    D.groups.forEach(function (name, g) {
      var b = button("", "show or hide group " + name, function () {
        var show = !!R.state.hidden[g];
        setGroupShown(g, show);
        b.classList.toggle("off", !show);
      });
      b.className = "group-toggle";
      b.setAttribute("data-group", name);
      var sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = colour(g);
      b.appendChild(sw);
      b.appendChild(document.createTextNode(name));
      bar.appendChild(b);
    });
    bar.appendChild(button("reset zoom", "or double-click the chart", function () { draw(); }));
    var hint = document.createElement("span");
    hint.textContent = "drag to zoom, double-click to reset; click a legend entry to hide a run";
    hint.style.color = "#777";
    bar.appendChild(hint);
  }

  /* A table's filter box, "show all" and sortable headers. */
  function cellKey(text, numeric) {
    if (!numeric) return text.toLowerCase();
    var v = parseFloat(text.replace(/^\[/, ""));
    return isNaN(v) ? null : v;
  }

  function setupTable(t) {
    var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var shown = Number(t.getAttribute("data-shown")) || 0, all = !shown;
    rows.forEach(function (r) { r.classList.remove("more"); });
    var bar = document.createElement("div"), input = document.createElement("input"), count = document.createElement("span");
    bar.className = "tablebar";
    input.type = "search";
    input.placeholder = "filter rows";
    var more = button("show all " + rows.length, "show every row", function () {
      all = !all;
      more.textContent = all ? "show the first " + shown : "show all " + rows.length;
      refresh();
    });
    function refresh() {
      var q = input.value.toLowerCase(), k = 0;
      rows.forEach(function (r) {
        var hit = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
        r.style.display = hit && (all || k < shown) ? "" : "none";
        if (hit) k++;
      });
      count.textContent = k + " of " + rows.length + " rows match" + (!all && k > shown ? ", " + shown + " shown" : "");
    }
    input.addEventListener("input", refresh);
    bar.appendChild(input);
    if (shown) bar.appendChild(more);
    bar.appendChild(count);
    t.parentNode.insertBefore(bar, t);
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, c) {
      th.title = "sort";
      th.addEventListener("click", function () {
        var numeric = th.classList.contains("n"), desc = !th.classList.contains("desc");
        Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(desc ? "desc" : "asc");
        var keyed = rows.map(function (r, i) { return { r: r, i: i, k: cellKey(r.cells[c] ? r.cells[c].textContent : "", numeric) }; });
        keyed.sort(function (a, b) {
          if (a.k === b.k) return a.i - b.i;
          if (a.k === null) return 1;  /* "-" last either way */
          if (b.k === null) return -1;
          return (a.k < b.k ? -1 : 1) * (desc ? -1 : 1);
        });
        rows = keyed.map(function (x) { return x.r; });
        rows.forEach(function (r) { body.appendChild(r); });
        refresh();
      });
    });
    refresh();
  }

  R.tip = document.createElement("div");
  R.tip.className = "tip";
  R.tip.id = "trend-tip";
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setupTable);
  if (document.getElementById("trend-plot") && (D.runs.length || D.bands.length)) {
    controls();
    draw();
    var width = document.getElementById("trend-plot").clientWidth;
    window.addEventListener("resize", function () {
      var w = document.getElementById("trend-plot").clientWidth;
      if (w !== width) { width = w; R.plot.setSize({ width: Math.max(320, w), height: 320 }); }
    });
  }
  R.readyAt = performance.now();  /* ms since navigation start: the browser test reads it */
  R.ready = true;
})();
