//! A group's total lag over the chosen window as inline SVG with labelled axes: lag in records
//! up the side (0, half and a round maximum), time along the bottom (five ticks). Tick times
//! carry `data-ms` so the page's script shows them in the reader's time zone; the server
//! writes them in UTC for a page read without scripts.

use super::{escape_html, Window};
use crate::lag::LagPoint;

/// The SVG's size.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 200.0;
/// The plot area inside it (room for the axis labels around).
pub const PLOT_LEFT: f64 = 64.0;
pub const PLOT_RIGHT: f64 = 628.0;
pub const PLOT_TOP: f64 = 12.0;
pub const PLOT_BOTTOM: f64 = 162.0;
/// Ticks along the time axis, ends included.
const TIME_TICKS: u64 = 5;

/// The smallest 1, 2 or 5 × 10ⁿ at or above `max` (at least 1): the top of the lag axis.
pub fn round_max(max: i64) -> i64 {
    let max = max.max(1);
    let mut step = 1i64;
    loop {
        for m in [1, 2, 5] {
            if let Some(top) = step.checked_mul(m) {
                if top >= max {
                    return top;
                }
            } else {
                return i64::MAX;
            }
        }
        step = match step.checked_mul(10) {
            Some(s) => s,
            None => return i64::MAX,
        };
    }
}

/// Polyline points of the `history` that falls in the window ending at `end_ms`, scaled to the
/// plot area with `top` as the highest lag.
pub fn points(history: &[LagPoint], end_ms: u64, window: Window, top: i64) -> String {
    let span = window.ms();
    let start_ms = end_ms.saturating_sub(span);
    let width = PLOT_RIGHT - PLOT_LEFT;
    let height = PLOT_BOTTOM - PLOT_TOP;
    history
        .iter()
        .filter(|p| p.at_ms >= start_ms)
        .map(|p| {
            let x = PLOT_LEFT + (p.at_ms - start_ms) as f64 / span as f64 * width;
            let y = PLOT_BOTTOM - p.total_lag.max(0) as f64 / top.max(1) as f64 * height;
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The chart of `group`'s lag history over `window`, ending at `end_ms`.
pub fn render(group: &str, history: &[LagPoint], end_ms: u64, window: Window) -> String {
    let start_ms = end_ms.saturating_sub(window.ms());
    let shown_max = history
        .iter()
        .filter(|p| p.at_ms >= start_ms)
        .map(|p| p.total_lag)
        .max()
        .unwrap_or(0);
    let top = round_max(shown_max);
    let mut svg = String::new();
    svg.push_str(&format!(
        "<figure class=\"chart\" data-group=\"{id}\"><figcaption>{id} — total lag, last {label}</figcaption>\
<svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" aria-label=\"total lag of {id} in records over the last {label}\">\
<rect class=\"frame\" x=\"{PLOT_LEFT}\" y=\"{PLOT_TOP}\" width=\"{w}\" height=\"{h}\"/>",
        id = escape_html(group),
        label = window.label(),
        w = PLOT_RIGHT - PLOT_LEFT,
        h = PLOT_BOTTOM - PLOT_TOP,
    ));
    // Lag axis: 0, half, top, with grid lines.
    for value in [0, top / 2, top] {
        let y = PLOT_BOTTOM - value as f64 / top as f64 * (PLOT_BOTTOM - PLOT_TOP);
        svg.push_str(&format!(
            "<line class=\"grid\" x1=\"{PLOT_LEFT}\" x2=\"{PLOT_RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
<text class=\"tick y\" x=\"{x:.1}\" y=\"{ty:.1}\" text-anchor=\"end\">{value}</text>",
            x = PLOT_LEFT - 6.0,
            ty = y + 4.0,
        ));
    }
    // Time axis: five ticks from the window's start to its end.
    for i in 0..TIME_TICKS {
        let at = start_ms + window.ms() * i / (TIME_TICKS - 1);
        let x = PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * i as f64 / (TIME_TICKS - 1) as f64;
        let at_ms = i64::try_from(at).unwrap_or(i64::MAX);
        svg.push_str(&format!(
            "<line class=\"tick-mark\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{PLOT_BOTTOM}\" y2=\"{y2}\"/>\
<text class=\"tick x\" x=\"{x:.1}\" y=\"{ty}\" text-anchor=\"{anchor}\" data-ms=\"{at}\" data-short=\"\">{utc}</text>",
            // The last label ends at its tick so the SVG's edge does not cut it.
            anchor = if i + 1 == TIME_TICKS { "end" } else { "middle" },
            y2 = PLOT_BOTTOM + 4.0,
            ty = PLOT_BOTTOM + 17.0,
            utc = crate::clock::utc_hour_minute(at_ms),
        ));
    }
    svg.push_str(&format!(
        "<text class=\"axis-title\" transform=\"translate(14 {mid:.1}) rotate(-90)\" text-anchor=\"middle\">lag (records)</text>\
<text class=\"axis-title\" x=\"{cx:.1}\" y=\"{by}\" text-anchor=\"middle\">time (<tspan class=\"tz\">UTC</tspan>)</text>\
<polyline class=\"lag-line\" data-points=\"{n}\" data-top=\"{top}\" points=\"{pts}\"/></svg></figure>",
        mid = (PLOT_TOP + PLOT_BOTTOM) / 2.0,
        cx = (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        by = HEIGHT - 4.0,
        n = history.len(),
        pts = points(history, end_ms, window, top),
    ));
    svg
}
