#pragma once
// The building blocks of the report's SVG plots (report_svg.cpp,
// doctor_report.cpp): escaping, number formatting, ticks, a plot frame and
// its axes. Well-formed XHTML-style markup: every element closed, text escaped.
#include <cstddef>
#include <string>
#include <vector>

namespace logratio_cli {

/// The text as valid UTF-8: every byte that does not start a well-formed
/// sequence becomes U+FFFD (names in user tables may be Latin-1).
std::string valid_utf8(const std::string& s);

/// Valid UTF-8 with & < > " ' escaped and control characters (but newline
/// and tab) as spaces.
std::string xml_escape(const std::string& raw);

namespace html_detail {

/// A series colour (8, cycled).
const char* palette(std::size_t i);

/// A pixel coordinate ("%.2f").
std::string f(double v);

/// "Nice" tick values covering [lo, hi] (at most ~2 * target of them; none
/// for a range that is not finite).
std::vector<double> ticks(double lo, double hi, int target = 5);

struct frame {
    double x0, x1, y0, y1;                     // data ranges
    double W = 860, H = 340, L = 80, R = 20, T = 20, B = 44;  // pixels
    double px(double x) const { return L + (x - x0) / (x1 - x0) * (W - L - R); }
    double py(double y) const { return H - B - (y - y0) / (y1 - y0) * (H - T - B); }
};

/// The plot frame, x and y ticks with grid lines, and the axis labels.
std::string axes(const frame& fr, const std::string& xlabel, const std::string& ylabel, bool log_y = false);

/// The opening <svg> element of a plot of fr's size, labelled for screen readers.
std::string svg_open(const frame& fr, const std::string& label);

}  // namespace html_detail
}  // namespace logratio_cli
