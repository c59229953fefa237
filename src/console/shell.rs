//! What every console page shares: the document around its `<main>`, the style sheet, the links
//! between pages, and the script that refreshes `<main>` in place and shows times in the
//! reader's time zone.

use super::{escape_html, CONSOLE_JSON_PATH, CONSOLE_PATH, POLL_INTERVAL_MS, TOPICS_PATH};

const STYLE: &str = "
body { font-family: system-ui, sans-serif; margin: 1.5em 2em; color: #222; }
header nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { padding: 4px 12px; border-bottom: 1px solid #ddd; text-align: left; }
th { background: #f4f4f4; }
td.num, td.lag, td.members, td.lag-seconds { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
.elsewhere, .set { color: #777; font-size: small; } td.override { font-weight: 600; }
tr.override td.value { font-weight: 600; } td.unavailable { color: #c0262d; }
.more, .about { color: #555; font-size: small; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; }
.status-OK { color: #17803d; } .status-WARNING { color: #b36b00; }
.status-STALLED, .status-STOPPED, .status-ERROR { color: #c0262d; font-weight: bold; }
.status-warming-up { color: #777; font-style: italic; }
.chart { margin: 1em 0; } .frame { fill: #fafafa; stroke: #ccc; }
.grid { stroke: #e6e6e6; } .tick-mark { stroke: #999; }
.tick, .axis-title { font-size: 11px; fill: #555; }
.lag-line { fill: none; stroke: #2463eb; stroke-width: 2; }
#updated { color: #777; font-size: small; }
#notice { background: #fff4d6; border: 1px solid #e6c86e; padding: 6px 10px; }
#notice:empty, #limits:empty { display: none; }
#limits { background: #fde8e8; border: 1px solid #e09a9a; padding: 6px 10px; }
nav.window a[aria-current] { font-weight: bold; }
";

/// The script: every `[data-ms]` element shows its instant in local time (`data-short`: hours
/// and minutes), `.tz` elements name the zone, and `<main>` is replaced by a fresh fragment
/// every poll interval.
fn script() -> String {
    format!(
        r#"(function () {{
  function pad(n) {{ return (n < 10 ? "0" : "") + n; }}
  function local(ms, short) {{
    var d = new Date(ms), hm = pad(d.getHours()) + ":" + pad(d.getMinutes());
    if (short) return hm;
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + hm + ":" + pad(d.getSeconds());
  }}
  function zone() {{
    var off = -new Date().getTimezoneOffset(), sign = off < 0 ? "-" : "+";
    off = Math.abs(off);
    return "UTC" + sign + pad(Math.floor(off / 60)) + ":" + pad(off % 60);
  }}
  function localize(root) {{
    root.querySelectorAll("[data-ms]").forEach(function (e) {{
      e.textContent = local(Number(e.getAttribute("data-ms")), e.hasAttribute("data-short"));
    }});
    root.querySelectorAll(".tz").forEach(function (e) {{ e.textContent = zone(); }});
  }}
  var main = document.getElementById("page");
  localize(main);
  function poll() {{
    var url = main.getAttribute("data-refresh");
    url += (url.indexOf("?") < 0 ? "?" : "&") + "fragment=1";
    fetch(url, {{ cache: "no-store" }})
      .then(function (r) {{ if (!r.ok && r.status !== 404) throw new Error(r.status); return r.text(); }})
      .then(function (html) {{ main.innerHTML = html; localize(main); }})
      .catch(function () {{}})
      .then(function () {{ setTimeout(poll, {POLL_INTERVAL_MS}); }});
  }}
  setTimeout(poll, {POLL_INTERVAL_MS});
}})();"#
    )
}

/// A whole page: `main` (a page's fragment) in the shared document; the script refreshes it
/// from `refresh` (the page's own URL).
pub fn page(title: &str, main: &str, refresh: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
<header><nav><a href=\"{CONSOLE_PATH}\">Groups</a><a href=\"{TOPICS_PATH}\">Topics</a><a href=\"{CONSOLE_JSON_PATH}\">JSON</a><a href=\"/metrics\">Metrics</a></nav></header>\n\
<main id=\"page\" data-refresh=\"{refresh}\">{main}</main>\n<script>\n{script}\n</script>\n</body>\n</html>\n",
        title = escape_html(title),
        refresh = escape_html(refresh),
        script = script(),
    )
}
