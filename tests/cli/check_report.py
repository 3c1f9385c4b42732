#!/usr/bin/python3
"""Checks on `logratio report`'s HTML, run by ctest.

  check_report.py xml REPORT.html   the page is well-formed (an XML parser reads
                                    it), self-contained (no script, no external
                                    URL) and has its sections and charts
  check_report.py png SHOT.png      a browser screenshot of it is not blank:
                                    enough non-white pixels and colours
"""
import re, struct, sys, zlib
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/1999/xhtml}"
SVG = "{http://www.w3.org/2000/svg}"


def check_xml(path):
    text = open(path, encoding="utf-8").read()
    root = ET.fromstring(text)  # raises on malformed markup
    assert root.tag == NS + "html", root.tag
    assert not list(root.iter(NS + "script")), "script element"
    for bad in ("<script", "src=\"http", "href=\"http", "@import", "url("):
        assert bad not in text, f"not self-contained: {bad}"
    heads = [h.text for h in root.iter(NS + "h2")]
    for want in ("Verdict", "Doctor", "Runs", "Updates with zero gradient norm"):
        assert any(h and h.startswith(want) for h in heads), f"missing section {want}: {heads}"
    svgs = list(root.iter(SVG + "svg"))
    assert len(svgs) >= 2, f"{len(svgs)} charts"
    # the Doctor section's plots: two bar charts and the (p_T, p_E) heat map
    labels = [s.get("aria-label", "") for s in svgs]
    for want in ("mean |delta| by response position", "mean |delta| by rollout probability",
                 "density of (p_T, p_E) on a log-odds scale"):
        assert want in labels, f"missing plot {want}: {labels}"
    heat = svgs[labels.index("density of (p_T, p_E) on a log-odds scale")]
    cells = [r for r in heat.iter(SVG + "rect") if r.get("fill", "").startswith("rgb(")]
    assert len(cells) >= 20, f"heat map has {len(cells)} cells"
    lines = list(root.iter(SVG + "polyline"))
    assert lines, "no per-run lines"
    print(f"ok: well-formed, {len(svgs)} charts, {len(lines)} run lines, sections {heads}")


def decode_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_png(path):
    w, h, bpp, rows = decode_png(path)
    colours, ink = set(), 0
    for r in rows[::2]:
        for x in range(0, w * bpp, bpp * 2):
            px = r[x:x + 3]
            colours.add(px)
            ink += px != b"\xff\xff\xff"
    total = (len(rows[::2])) * len(range(0, w * bpp, bpp * 2))
    frac = ink / total
    assert w >= 800 and h >= 600, (w, h)
    assert frac > 0.02, f"blank page: {frac:.4f} non-white"
    assert len(colours) > 20, f"only {len(colours)} colours"
    print(f"ok: {w}x{h}, {frac:.3f} non-white, {len(colours)} colours")


if __name__ == "__main__":
    {"xml": check_xml, "png": check_png}[sys.argv[1]](sys.argv[2])
