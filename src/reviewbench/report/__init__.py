"""Stage 5: reports of a scored run directory — HTML, CSV and SARIF.

``build_report`` scores the run directory and joins the result with its runs and corpus
into one typed :class:`ReportData`; each writer only formats it.
"""

from ._data import build_report, classify_findings
from ._model import Outcome, ReportData, ReportOptions, Summary, Verdict
from .csv import write_csv
from .html import render_html, write_html
from .sarif import build_sarif, write_sarif

__all__ = [
    "Outcome",
    "ReportData",
    "ReportOptions",
    "Summary",
    "Verdict",
    "build_report",
    "build_sarif",
    "classify_findings",
    "render_html",
    "write_csv",
    "write_html",
    "write_sarif",
]
