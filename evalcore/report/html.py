"""The report as one self-contained HTML file: plotly.js embedded once, no external request (a Content Security
Policy forbids any), every string from the data escaped, the API's tables embedded as JSON for machines.

Layout: title, summary, one part per section (what it shows, the one-line meaning of its intervals, figures,
tables, notes), then provenance (input files with sha256, rows, mapping, evalcore version, settings and seed, date,
time per section).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import asdict

import numpy as np
import pandas as pd
import plotly.io as pio
from plotly.offline import get_plotlyjs

from evalcore import __version__

#: rows of one table shown in the page (all rows are in the embedded data)
MAX_ROWS = 60
CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:")
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a202c;max-width:1100px;margin:2rem auto;
padding:0 1rem;line-height:1.45}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #2b6cb0;padding-bottom:.2rem;margin-top:2.5rem}
.meaning{background:#f3f6fa;border-left:4px solid #2b6cb0;padding:.5rem .8rem;margin:.6rem 0}
.summary li{margin:.3rem 0}.note{color:#744210;background:#fffaf0;padding:.3rem .6rem;margin:.3rem 0}
table{border-collapse:collapse;font-size:.85rem;margin:.6rem 0;display:block;overflow-x:auto}
th,td{border:1px solid #cbd5e0;padding:.2rem .45rem;text-align:right;white-space:nowrap}
th{background:#edf2f7}td.text{text-align:left}caption{text-align:left;font-weight:600;padding:.3rem 0}
.muted{color:#4a5568;font-size:.85rem}
"""


def _number(value: float) -> str:
    """Three decimals for rates and differences; counts and other large numbers with thousands separators."""
    if math.isnan(value):
        return "–"
    if abs(value) >= 100:
        return f"{int(value):,}" if value.is_integer() else f"{value:,.1f}"
    return f"{value:.3f}"


def _cell(value) -> tuple[str, bool]:
    """(escaped text, whether it is text rather than a number)."""
    if isinstance(value, bool):
        return ("yes" if value else "no"), True
    if isinstance(value, int):
        return f"{value:,}", False
    if isinstance(value, float):
        return _number(value), False
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "–", False
    return html.escape(str(value)), True


def _with_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """``x, x_low, x_high`` (and ``x, ci_low, ci_high`` with ``x`` the estimate or the column just before
    ``ci_low``) shown as one column ``x (low to high)``."""
    out = frame.copy()
    columns = list(frame.columns)
    before = columns[columns.index("ci_low") - 1] if "ci_low" in columns[1:] else "estimate"
    pairs = [("estimate" if "estimate" in columns else before, "ci_low", "ci_high")] + [
        (c, f"{c}_low", f"{c}_high") for c in columns]
    for est, low, high in pairs:
        if {est, low, high} <= set(out.columns) and all(pd.api.types.is_numeric_dtype(out[c])
                                                        for c in (est, low, high)):
            text = [f"{_number(e)} ({_number(lo)} to {_number(hi)})" if not any(map(math.isnan, (e, lo, hi)))
                    else (f"{_number(e)} (no interval)" if not math.isnan(e) else "–")
                    for e, lo, hi in zip(out[est].astype(float), out[low].astype(float), out[high].astype(float))]
            position = out.columns.get_loc(est)
            out = out.drop(columns=[est, low, high])
            out.insert(position, f"{est} (interval)", text)
    return out


def table_html(name: str, frame: pd.DataFrame) -> str:
    shown = _with_intervals(frame.head(MAX_ROWS))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown.columns)
    body = []
    for row in shown.itertuples(index=False):
        cells = [_cell(v) for v in row]
        body.append("<tr>" + "".join(f"<td class='text'>{t}</td>" if is_text else f"<td>{t}</td>"
                                     for t, is_text in cells) + "</tr>")
    more = (f"<p class='muted'>The first {MAX_ROWS} of {len(frame):,} rows; every row is in the report's embedded "
            "data (the script element with id evalcore-numbers).</p>" if len(frame) > MAX_ROWS else "")
    return (f"<table><caption>{html.escape(name)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>{more}")


def figure_html(fig, index: int) -> str:
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"figure-{index}",
                       config={"displaylogo": False, "responsive": True,
                               "toImageButtonOptions": {"format": "png", "scale": 2}})


def _records(frame: pd.DataFrame) -> list[dict]:
    return json.loads(frame.to_json(orient="records", double_precision=15, default_handler=str))


def numbers(report) -> dict:
    """Every section's tables and facts, for machines (embedded in the page as JSON)."""
    return {"evalcore": __version__, "settings": asdict(report.settings),
            "sections": {s.key: {"title": s.title, "meaning": s.meaning, "facts": s.facts,
                                 "tables": {name: _records(t) for name, t in s.tables.items()}}
                         for s in report.sections}}


def _finite(value):
    """``value`` with numpy scalars as Python numbers and every NaN or infinity as None (null), so that any JSON
    parser reads it."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, dict):
        return {key: _finite(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_script(data: dict) -> str:
    text = json.dumps(_finite(data), ensure_ascii=False, allow_nan=False, default=str).replace("<", "\\u003c")
    return f'<script type="application/json" id="evalcore-numbers">{text}</script>'


def provenance_html(report) -> str:
    p = report.provenance
    files = "".join(f"<tr><td class='text'>{html.escape(f.name)}</td><td class='text'><code>{f.sha256}</code></td>"
                    f"<td>{f.size:,}</td></tr>" for f in p.files) or \
        "<tr><td class='text' colspan='3'>(data passed in memory, not read from files)</td></tr>"
    mapping = ", ".join(f"{html.escape(role)} ← {html.escape(str(col))}" for role, col in p.mapping.items())
    times = ", ".join(f"{html.escape(k)} {v:.1f} s" for k, v in report.timings.items())
    settings = ", ".join(f"{k} = {v}" for k, v in asdict(report.settings).items())
    return (f"<h2 id='provenance'>Provenance</h2><table><caption>Input files</caption><thead><tr><th>file</th>"
            f"<th>sha256</th><th>bytes</th></tr></thead><tbody>{files}</tbody></table>"
            + (f"<p>Scope: {html.escape(p.scope)}.</p>" if p.scope else "")
            + f"<p>{p.rows:,} rows, a <b>{html.escape(p.kind)}</b> table of {p.models:,} models. "
            "Mapping (role ← column):"
            f" {mapping or '(columns named after roles)'}.</p>"
            f"<p>evalcore {html.escape(__version__)} · settings: {html.escape(settings)} (every bootstrap and fold "
            f"uses seed {report.settings.seed}) · created {html.escape(p.created)}.</p>"
            f"<p class='muted'>Time per section: {times}.</p>")


def render(report) -> str:
    """The whole HTML document."""
    parts, index = [], 0
    for section in report.sections:
        figs = []
        for fig in section.figures:
            figs.append(figure_html(fig, index))
            index += 1
        notes = "".join(f"<p class='note'>{html.escape(n)}</p>" for n in section.notes)
        tables = "".join(table_html(name, t) for name, t in section.tables.items())
        parts.append(f"<section id='{section.key}'><h2>{html.escape(section.title)}</h2>"
                     f"<p>{html.escape(section.intro)}</p><p class='meaning'><b>What the intervals mean:</b> "
                     f"{html.escape(section.meaning)}</p>{''.join(figs)}{tables}{notes}</section>")
    summary = "".join(f"<li>{html.escape(s)}</li>" for s in report.summary) or \
        "<li>This log supports none of the report's methods.</li>"
    skipped = "".join(f"<li>{html.escape(s)}</li>" for s in report.skipped)
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(report.title)}</title><style>{STYLE}</style>"
            f"<script>{get_plotlyjs()}</script></head><body>"
            f"<h1>{html.escape(report.title)}</h1><p class='muted'>{html.escape(report.provenance.created)} · "
            f"evalcore {html.escape(__version__)} · {report.provenance.rows:,} rows</p>"
            f"<h2 id='summary'>Summary</h2><ul class='summary'>{summary}</ul>"
            + (f"<p class='muted'>Not in this report:</p><ul class='muted'>{skipped}</ul>" if skipped else "")
            + "".join(parts) + provenance_html(report) + _json_script(numbers(report)) + "</body></html>")
