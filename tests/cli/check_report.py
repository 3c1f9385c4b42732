#!/usr/bin/python3
"""Checks on `logratio report`'s HTML, run by ctest.

  check_report.py xml REPORT.html   the page is well-formed (an XML parser reads
                                    it: scripts sit in CDATA sections), self-
                                    contained (inline scripts and styles only,
                                    no src, no external URL), has its sections
                                    in order, its chart data as JSON and its
                                    static charts
  check_report.py png SHOT.png      a browser screenshot of it is not blank
"""
import json, os, sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "browser"))
import png  # noqa: E402

NS = "{http://www.w3.org/1999/xhtml}"
SVG = "{http://www.w3.org/2000/svg}"
ORDER = ["verdict", "trend", "runs", "evidence", "doctor", "histogram", "split", "zero-grad", "notes", "sources"]


def check_xml(path):
    text = open(path, encoding="utf-8").read()
    root = ET.fromstring(text)  # raises on malformed markup
    assert root.tag == NS + "html", root.tag
    scripts = list(root.iter(NS + "script"))
    assert all(s.get("src") is None for s in scripts), "a script with src"
    for bad in ("src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import", "url("):
        assert bad not in text, f"not self-contained: {bad}"
    data = [s for s in scripts if s.get("type") == "application/json"]
    assert len(data) == 1, "no chart data block"
    raw = data[0].text
    assert "<" not in raw and "&" not in raw, "the JSON block holds < or &"
    d = json.loads(raw)
    assert d["runs"] and d["xs"] and d["groups"], "empty chart data"
    assert any("uPlot" in (s.text or "") for s in scripts), "uPlot not inlined"
    ids = [s.get("id") for s in root.iter(NS + "section")]
    known = [i for i in ids if i in ORDER]
    assert known == sorted(known, key=ORDER.index), f"sections out of order: {ids}"
    for want in ("verdict", "trend", "runs", "evidence", "doctor", "zero-grad", "sources"):
        assert want in ids, f"missing section {want}: {ids}"
    toc = [a.get("href") for a in root.iter(NS + "a") if (a.get("class") or "").startswith("toc")]
    assert toc == ["#" + i for i in ids], f"contents {toc} vs sections {ids}"
    heads = [p for p in root.iter(NS + "p") if p.get("class") == "headline"]
    assert heads and heads[0].text, "no headline"
    svgs = list(root.iter(SVG + "svg"))
    labels = [s.get("aria-label", "") for s in svgs]
    for want in ("mean of run means per group with 95% confidence intervals", "mean |delta| by response position",
                 "mean |delta| by rollout probability", "density of (p_T, p_E) on a log-odds scale"):
        assert want in labels, f"missing plot {want}: {labels}"
    heat = svgs[labels.index("density of (p_T, p_E) on a log-odds scale")]
    cells = [r for r in heat.iter(SVG + "rect") if r.get("fill", "").startswith("rgb(")]
    assert len(cells) >= 20, f"heat map has {len(cells)} cells"
    lines = list(root.iter(SVG + "polyline"))
    assert lines, "no per-run lines in the static fallback"
    print(f"ok: well-formed, {len(svgs)} static charts, {len(d['runs'])} runs in the chart data, sections {ids}")


def check_png(path):
    w, h, frac, colours = png.ink(open(path, "rb").read())
    assert w >= 800 and h >= 600, (w, h)
    assert frac > 0.02, f"blank page: {frac:.4f} non-white"
    assert colours > 20, f"only {colours} colours"
    print(f"ok: {w}x{h}, {frac:.3f} non-white, {colours} colours")


if __name__ == "__main__":
    {"xml": check_xml, "png": check_png}[sys.argv[1]](sys.argv[2])
