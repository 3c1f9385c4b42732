#include "html_svg.hpp"

#include <cmath>
#include <cstdio>

#include "runs_output.hpp"

namespace logratio_cli {

/// The text as valid UTF-8: every byte that does not start a well-formed
/// sequence becomes U+FFFD (names in user tables may be Latin-1).
std::string valid_utf8(const std::string& s) {
    std::string o;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const std::size_t n = s.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = p[i];
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (std::size_t k = 1; ok && k < len; ++k) ok = (p[i + k] & 0xC0) == 0x80;
        if (ok && len == 2) ok = c >= 0xC2;                                       // no overlong forms
        if (ok && len == 3) ok = !(c == 0xE0 && p[i + 1] < 0xA0) && !(c == 0xED && p[i + 1] >= 0xA0);
        if (ok && len == 4) ok = !(c == 0xF0 && p[i + 1] < 0x90) && !(c == 0xF4 && p[i + 1] >= 0x90) && c <= 0xF4;
        if (ok) {
            o.append(s, i, len);
            i += len;
        } else {
            o += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return o;
}

std::string xml_escape(const std::string& raw) {
    const std::string s = valid_utf8(raw);
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            case '\'': o += "&#39;"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') o += ' ';
                else o += c;
        }
    }
    return o;
}

namespace html_detail {

const char* palette(std::size_t i) {
    static const char* c[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
    return c[i % 8];
}

std::string f(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

/// "Nice" tick values covering [lo, hi] (at most ~2 * target of them; none
/// for a range that is not finite).
std::vector<double> ticks(double lo, double hi, int target) {
    std::vector<double> t;
    if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(hi - lo)) return t;
    if (!(hi > lo)) return {lo};
    const double raw = (hi - lo) / target, mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    if (!(step > 0) || !std::isfinite(step)) return t;
    const double k0 = std::ceil(lo / step), k1 = std::floor(hi / step + 1e-9);
    if (!(k1 - k0 < 4.0 * target) || !(k1 >= k0)) return {lo, hi};  // steps below the resolution of lo
    const int count = static_cast<int>(k1 - k0);  // a counted loop: k0 + 1 may equal k0
    for (int i = 0; i <= count; ++i) t.push_back(k0 + i == 0 ? 0.0 : (k0 + i) * step);
    return t;
}

std::string axes(const frame& fr, const std::string& xlabel, const std::string& ylabel, bool log_y) {
    std::string s;
    s += "<rect x=\"" + f(fr.L) + "\" y=\"" + f(fr.T) + "\" width=\"" + f(fr.W - fr.L - fr.R) + "\" height=\"" +
         f(fr.H - fr.T - fr.B) + "\" fill=\"#fafafa\" stroke=\"#888\"/>\n";
    for (double v : ticks(fr.x0, fr.x1, 8)) {
        s += "<line x1=\"" + f(fr.px(v)) + "\" x2=\"" + f(fr.px(v)) + "\" y1=\"" + f(fr.H - fr.B) + "\" y2=\"" +
             f(fr.H - fr.B + 5) + "\" stroke=\"#888\"/>";
        s += "<text x=\"" + f(fr.px(v)) + "\" y=\"" + f(fr.H - fr.B + 18) + "\" text-anchor=\"middle\">" +
             xml_escape(fmt(v, "%g")) + "</text>\n";
    }
    std::vector<double> yt;
    if (log_y)
        for (double e = std::ceil(fr.y0); e <= fr.y1; e += 1) yt.push_back(e);  // powers of ten only
    else
        yt = ticks(fr.y0, fr.y1, 5);
    for (double v : yt) {
        s += "<line x1=\"" + f(fr.L) + "\" x2=\"" + f(fr.W - fr.R) + "\" y1=\"" + f(fr.py(v)) + "\" y2=\"" +
             f(fr.py(v)) + "\" stroke=\"#e4e4e4\"/>";
        s += "<text x=\"" + f(fr.L - 6) + "\" y=\"" + f(fr.py(v) + 4) + "\" text-anchor=\"end\">" +
             xml_escape(log_y ? fmt(std::pow(10.0, v), "%g") : fmt(v, "%.3g")) + "</text>\n";
    }
    s += "<text x=\"" + f((fr.L + fr.W - fr.R) / 2) + "\" y=\"" + f(fr.H - 6) + "\" text-anchor=\"middle\">" +
         xml_escape(xlabel) + "</text>\n";
    s += "<text x=\"14\" y=\"" + f((fr.T + fr.H - fr.B) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " +
         f((fr.T + fr.H - fr.B) / 2) + ")\">" + xml_escape(ylabel) + "</text>\n";
    return s;
}

std::string svg_open(const frame& fr, const std::string& label) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + f(fr.W) + "\" height=\"" + f(fr.H) +
           "\" viewBox=\"0 0 " + f(fr.W) + " " + f(fr.H) + "\" role=\"img\" aria-label=\"" + xml_escape(label) +
           "\" font-family=\"sans-serif\" font-size=\"12\">\n";
}

}  // namespace html_detail
}  // namespace logratio_cli
