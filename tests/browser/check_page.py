#!/usr/bin/python3
"""Checks `logratio report`'s HTML page in a real browser (chromium headless,
driven over the DevTools protocol by cdp.py), as ctest runs it:

  check_page.py REPORT.html [--shot SHOT.png] [--max-ms 2000]

  - it loads with no exception, no console or log error, and requests nothing
    but the file itself (and data: URLs);
  - the load event and the trend chart drawn come within --max-ms;
  - the first screen (1280x800) holds the headline, the trend chart and the
    group means;
  - hovering a plotted point shows its run (or band), step and value in the
    tooltip (and, with few runs, in uPlot's legend);
  - clicking a legend entry hides its line; a group button hides the group;
  - dragging zooms, double-clicking resets; the log-scale toggle redraws;
  - the runs table filters and shows at most 50 rows at first;
  - a screenshot is not blank;
  - with scripts disabled the static charts show (the <noscript> fallback).
Exit 77 (skipped) when no chromium is installed.
"""
import argparse, base64, json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp, png  # noqa: E402

W, H = 1280, 800


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(page, path, max_ms):
    for d in ("Page", "Runtime", "Network", "Log"):
        page.call(d + ".enable")
    page.call("Emulation.setDeviceMetricsOverride", width=W, height=H, deviceScaleFactor=1, mobile=False)
    url = "file://" + os.path.abspath(path)
    t0, mark = time.monotonic(), len(page.events)
    page.call("Page.navigate", url=url)
    page.wait_event("Page.loadEventFired", timeout=30, since=mark)
    end = time.monotonic() + 30
    while not page.evaluate("!!(window.logratioReport && window.logratioReport.ready)"):
        if time.monotonic() > end:
            fail("the page's script never finished (window.logratioReport.ready)")
        time.sleep(0.02)
    wall = (time.monotonic() - t0) * 1000
    t = page.evaluate("(function(){var n = performance.getEntriesByType('navigation')[0];"
                      "return {load: n.loadEventEnd, ready: window.logratioReport.readyAt};})()")
    print(f"load event {t['load']:.0f} ms, chart drawn {t['ready']:.0f} ms after navigation start "
          f"({wall:.0f} ms wall clock)")
    if max(t["load"], t["ready"]) > max_ms:
        fail(f"rendered in {max(t['load'], t['ready']):.0f} ms, over {max_ms} ms")
    return url


def check_quiet(page, url):
    page.drain(0.3)
    errors, requests = [], []
    for e in page.events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.exceptionThrown":
            errors.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:400])
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console." + p["type"] + ": " + json.dumps(p.get("args"))[:400])
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", "")[:400])
        elif m == "Network.requestWillBeSent":
            requests.append(p["request"]["url"])
    others = [u for u in requests if u != url and not u.startswith("data:")]
    if errors:
        fail("; ".join(errors))
    if others:
        fail(f"requests other than the file: {others[:5]}")
    print(f"no script error; {len(requests)} request(s), all the file itself or data: URLs")


def check_first_screen(page):
    r = page.evaluate("""(function(){
      function box(sel){var e=document.querySelector(sel); if(!e) return null; var b=e.getBoundingClientRect();
        return {top:b.top, bottom:b.bottom, left:b.left, right:b.right, w:b.width, h:b.height};}
      return {headline: box('p.headline'), trend: box('#trend-plot canvas'), groups: box('#chart-group_means svg'),
              text: (document.querySelector('p.headline')||{}).textContent};})()""")
    for k in ("headline", "trend", "groups"):
        b = r[k]
        if not b or b["h"] < 10 or b["w"] < 100:
            fail(f"{k} missing or empty: {b}")
        if b["top"] < 0 or b["bottom"] > H + 1 or b["right"] > W + 1:
            fail(f"{k} not on the first {W}x{H} screen: {b}")
    # the canvas has pixels drawn (uPlot drew the lines)
    drawn = page.evaluate("""(function(){var c=document.querySelector('#trend-plot canvas'),
      d=c.getContext('2d').getImageData(0,0,c.width,c.height).data, n=0;
      for (var i=3;i<d.length;i+=16) if (d[i]>0) n++; return n;})()""")
    if drawn < 200:
        fail(f"the trend chart's canvas is nearly empty ({drawn} sampled pixels)")
    print(f"first screen: headline ({r['text'][:90]}...), trend chart, group means; {drawn} drawn pixels sampled")


def mouse(page, kind, x, y, buttons=0, clicks=0):
    params = dict(type=kind, x=x, y=y, buttons=buttons)
    if kind in ("mousePressed", "mouseReleased"):
        params.update(button="left", clickCount=clicks or 1)
    page.call("Input.dispatchMouseEvent", **params)


def click(page, x, y, clicks=1):
    mouse(page, "mouseMoved", x, y)
    mouse(page, "mousePressed", x, y, buttons=1, clicks=clicks)
    mouse(page, "mouseReleased", x, y, clicks=clicks)


def settle(page):
    page.evaluate("new Promise(function(r){requestAnimationFrame(function(){requestAnimationFrame(r);});})")


def check_hover(page):
    # a plotted point of the first visible line, in the middle of its steps
    p = page.evaluate("""(function(){var R=window.logratioReport, u=R.plot, ob=u.over.getBoundingClientRect();
      for (var s=1;s<u.series.length;s++){ if(!u.series[s].show) continue; var col=u.data[s], ks=[];
        for (var i=0;i<col.length;i++) if (col[i]!==null && col[i]!==undefined) ks.push(i);
        if (!ks.length) continue; var i=ks[Math.floor(ks.length/2)];
        return {s:s, i:i, x:ob.left+u.valToPos(u.data[0][i],'x'), y:ob.top+u.valToPos(col[i],'y'),
                label:u.series[s].label, value:col[i], step:u.data[0][i]}; }
      return null;})()""")
    if not p:
        fail("no plotted point to hover")
    mouse(page, "mouseMoved", p["x"], p["y"])
    settle(page)
    tip = page.evaluate("""(function(){var t=document.getElementById('trend-tip');
      return t && getComputedStyle(t).display!=='none' ? t.textContent : null;})()""")
    if not tip:
        fail(f"hovering {p} shows no tooltip")
    # the tooltip names the line nearest the pointer (p's, or one drawn at the same pixel) and its value
    q = page.evaluate(f"""(function(){{var R=window.logratioReport, u=R.plot, s=R.tipSeries, i={p['i']};
      return {{label:u.series[s].label, text:u.series[s].value(u, u.data[s][i]),
               off:Math.abs(u.valToPos(u.data[s][i],'y')-u.valToPos(u.data[{p['s']}][i],'y'))}};}})()""")
    if q["label"].split(" ")[0] not in tip or q["text"] not in tip or q["off"] > 1.5:
        fail(f"tooltip {tip!r} does not name the hovered line ({p['label']!r}, or {q}) with its value")
    shown = page.evaluate(f"(function(){{var u=window.logratioReport.plot; return u.series[{p['s']}].value(u, {p['value']});}})()")
    legend = page.evaluate(f"""(function(){{var e=document.querySelectorAll('.u-legend .u-series')[{p['s']}];
      return e ? e.querySelector('.u-value').textContent : null;}})()""")
    if legend is not None and legend != shown:
        fail(f"legend shows {legend!r}, not the hovered value {shown!r}")
    print(f"hover: tooltip {tip!r}" + (f"; legend value {legend}" if legend is not None else ""))


def check_legend_click(page):
    b = page.evaluate("""(function(){var e=document.querySelectorAll('.u-legend .u-series')[1];
      if(!e) return null; e.scrollIntoView({block:'center'}); var r=e.querySelector('.u-label').getBoundingClientRect();
      return {x:r.left+r.width/2, y:r.top+r.height/2};})()""")
    if b:
        click(page, b["x"], b["y"])
        settle(page)
        st = page.evaluate("""(function(){var u=window.logratioReport.plot;
          return {show:u.series[1].show, off:document.querySelectorAll('.u-legend .u-series')[1].classList.contains('u-off')};})()""")
        if st["show"] or not st["off"]:
            fail(f"clicking the first legend entry did not hide its line: {st}")
        click(page, b["x"], b["y"])  # back on
        settle(page)
        print("legend click hides a line (uPlot series.show false, entry u-off) and shows it again")
    g = page.evaluate("""(function(){var e=document.querySelector('.group-toggle'); e.scrollIntoView({block:'center'});
      var r=e.getBoundingClientRect(); return {x:r.left+r.width/2, y:r.top+r.height/2, name:e.getAttribute('data-group')};})()""")
    click(page, g["x"], g["y"])
    settle(page)
    st = page.evaluate("""(function(){var R=window.logratioReport, u=R.plot, on=0, off=0;
      R.lines.forEach(function(l,i){ if (l.g===0) { if (u.series[i+1].show) on++; else off++; } }); return {on:on, off:off};})()""")
    if st["on"] or not st["off"]:
        fail(f"the group button did not hide group {g['name']}: {st}")
    click(page, g["x"], g["y"])
    settle(page)
    print(f"group button hides the {st['off']} line(s) of group {g['name']} and shows them again")


def check_zoom_and_log(page):
    page.evaluate("window.scrollTo(0,0)")
    o = page.evaluate("""(function(){var u=window.logratioReport.plot, b=u.over.getBoundingClientRect();
      return {l:b.left, t:b.top, w:b.width, h:b.height, min:u.scales.x.min, max:u.scales.x.max};})()""")
    y = o["t"] + o["h"] / 2
    mouse(page, "mouseMoved", o["l"] + o["w"] * 0.3, y)
    mouse(page, "mousePressed", o["l"] + o["w"] * 0.3, y, buttons=1)
    mouse(page, "mouseMoved", o["l"] + o["w"] * 0.5, y, buttons=1)
    mouse(page, "mouseMoved", o["l"] + o["w"] * 0.6, y, buttons=1)
    mouse(page, "mouseReleased", o["l"] + o["w"] * 0.6, y)
    settle(page)
    z = page.evaluate("(function(){var u=window.logratioReport.plot; return [u.scales.x.min, u.scales.x.max];})()")
    if not (z[0] > o["min"] and z[1] < o["max"]):
        fail(f"dragging did not zoom: x {o['min']}..{o['max']} -> {z}")
    click(page, o["l"] + o["w"] * 0.5, y, clicks=1)
    click(page, o["l"] + o["w"] * 0.5, y, clicks=2)
    page.call("Input.dispatchMouseEvent", type="mouseReleased", x=o["l"] + o["w"] * 0.5, y=y, button="left", clickCount=2)
    page.evaluate("""(function(){var u=window.logratioReport.plot;
      u.over.dispatchEvent(new MouseEvent('dblclick', {bubbles:true, clientX:0, clientY:0}));})()""")
    settle(page)
    r = page.evaluate("(function(){var u=window.logratioReport.plot; return [u.scales.x.min, u.scales.x.max];})()")
    if abs(r[0] - o["min"]) > 1e-9 * max(1, abs(o["min"])) or abs(r[1] - o["max"]) > 1e-9 * max(1, abs(o["max"])):
        fail(f"double-click did not reset the zoom: {r} vs {o['min']}..{o['max']}")
    page.evaluate("""(function(){var c=document.querySelector('#trend-controls input[type=checkbox]'); c.click();})()""")
    settle(page)
    d = page.evaluate("window.logratioReport.plot.scales.y.distr")
    page.evaluate("""(function(){document.querySelector('#trend-controls input[type=checkbox]').click();})()""")
    if d != 3:
        fail(f"the log-scale toggle did not redraw on a log axis (distr {d})")
    print(f"drag zooms x to {z[0]:.4g}..{z[1]:.4g}, double-click resets; log-scale toggle redraws")


def check_many(page, max_ms):
    """Past 300 runs: the bands by default; the runs drawn on demand, hoverable."""
    info = page.evaluate("(function(){var R=window.logratioReport; return {many:R.data.many, runs:R.data.runs.length,"
                         "kinds:R.lines.map(function(l){return l.kind;}).filter(function(k,i,a){return a.indexOf(k)===i;})};})()")
    if not info["many"]:
        return
    if info["kinds"] != ["hi", "mid", "lo"]:
        fail(f"{info['runs']} runs but the chart draws {info['kinds']}, not group bands")
    ms = page.evaluate("""new Promise(function(done){var t=performance.now(),
      c=document.querySelectorAll('#trend-controls input[type=checkbox]')[1]; c.click();
      requestAnimationFrame(function(){requestAnimationFrame(function(){done(performance.now()-t);});});})""")
    n = page.evaluate("window.logratioReport.lines.length")
    if n != info["runs"]:
        fail(f"'show the runs' draws {n} lines, not {info['runs']}")
    if ms > max_ms:
        fail(f"drawing the {n} runs took {ms:.0f} ms")
    check_hover(page)
    page.evaluate("document.querySelectorAll('#trend-controls input[type=checkbox]')[1].click()")
    print(f"{info['runs']} runs: group bands by default; the runs drawn on demand in {ms:.0f} ms")


def check_table(page):
    t = page.evaluate("""(function(){var t=document.getElementById('table-runs'); if(!t) return null;
      var rows=[].slice.call(t.tBodies[0].rows), vis=rows.filter(function(r){return r.offsetParent!==null;});
      return {rows:rows.length, visible:vis.length, bar:!!t.previousElementSibling.querySelector('input'),
              first:rows[0].cells[0].textContent};})()""")
    if not t:
        fail("no runs table")
    if t["visible"] > 50 or t["visible"] != min(50, t["rows"]) or not t["bar"]:
        fail(f"runs table: {t}")
    n = page.evaluate(f"""(function(){{var t=document.getElementById('table-runs'), i=t.previousElementSibling.querySelector('input');
      i.value={json.dumps(t['first'])}; i.dispatchEvent(new Event('input'));
      var v=[].slice.call(t.tBodies[0].rows).filter(function(r){{return r.offsetParent!==null;}}).length;
      i.value=''; i.dispatchEvent(new Event('input')); return v;}})()""")
    if not 1 <= n < max(2, t["rows"]):
        fail(f"filtering the runs table by {t['first']!r} leaves {n} rows of {t['rows']}")
    # sorting by mean (a numeric column), both ways; "-" cells last
    order = page.evaluate("""(function(){var t=document.getElementById('table-runs'), th=t.tHead.rows[0].cells, c=-1;
      for (var k=0;k<th.length;k++) if (th[k].textContent==='mean') c=k;
      function col(){return [].slice.call(t.tBodies[0].rows).map(function(r){return parseFloat(r.cells[c].textContent);})
        .filter(function(v){return !isNaN(v);});}
      th[c].click(); var down=col(); th[c].click(); var up=col(); return {down:down, up:up};})()""")
    if order["down"] != sorted(order["down"], reverse=True) or order["up"] != sorted(order["up"]):
        fail("clicking the mean column's header does not sort the runs table")
    print(f"runs table: {t['visible']} of {t['rows']} rows shown, filter by {t['first']!r} leaves {n}, sorts by mean")


def check_shot(page, out):
    page.evaluate("window.scrollTo(0,0)")
    data = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
    if out:
        open(out, "wb").write(data)
    w, h, frac, colours = png.ink(data)
    if w < 800 or h < 600 or frac < 0.02 or colours < 20:
        fail(f"blank screenshot: {w}x{h}, {frac:.3f} non-white, {colours} colours")
    print(f"screenshot {w}x{h}: {frac:.3f} non-white, {colours} colours")


def check_noscript(page, url):
    """Without scripts the page still shows its charts (the static SVG trend)."""
    page.call("Emulation.setScriptExecutionDisabled", value=True)
    mark = len(page.events)
    page.call("Page.navigate", url=url)
    page.wait_event("Page.loadEventFired", timeout=30, since=mark)
    # scripts are off: the layout is read through the DOM domain
    doc = page.call("DOM.getDocument", depth=0)["root"]["nodeId"]
    found = {}
    for sel in ("#trend-figure noscript svg", "#trend-figure svg", "#chart-group_means svg"):
        n = page.call("DOM.querySelector", nodeId=doc, selector=sel)["nodeId"]
        if n:
            try:
                q = page.call("DOM.getBoxModel", nodeId=n)["model"]
                found[sel] = (q["width"], q["height"])
            except RuntimeError:
                found[sel] = None
    page.call("Emulation.setScriptExecutionDisabled", value=False)
    trend = found.get("#trend-figure noscript svg") or found.get("#trend-figure svg")
    if not trend or trend[0] < 300 or not found.get("#chart-group_means svg"):
        fail(f"without scripts the charts are not shown: {found}")
    print(f"without scripts: the static trend chart ({trend[0]:.0f}x{trend[1]:.0f}) and the group means show")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--shot", default="")
    ap.add_argument("--max-ms", type=float, default=2000)
    ap.add_argument("--size", default="1280x800", help="the first screen, WIDTHxHEIGHT")
    a = ap.parse_args()
    global W, H
    W, H = (int(v) for v in a.size.split("x"))
    if not cdp.find_chromium():
        print("chromium not installed (bash .ci/deps installs it): skipped")
        sys.exit(77)
    with cdp.Browser(width=W, height=H) as b:
        page = b.page()
        url = load(page, a.report, a.max_ms)
        check_first_screen(page)
        check_shot(page, a.shot)
        check_hover(page)
        check_legend_click(page)
        check_zoom_and_log(page)
        check_many(page, a.max_ms)
        check_table(page)
        check_quiet(page, url)
        check_noscript(page, url)
    print("ok: " + a.report)


if __name__ == "__main__":
    main()
