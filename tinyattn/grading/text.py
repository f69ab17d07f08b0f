"""Learner-controlled text made safe to show: before it reaches a terminal, a CSV, JSON or HTML.

Whatever the learner's code prints, raises or names (a message, a class name, a file name) is
cleaned once, where it enters the judge: control characters (ANSI escape sequences, carriage
returns, the C1 range, bidirectional overrides) are dropped and the length is capped. HTML is
escaped where HTML is written (html.escape in the notebook report).
"""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the bidi/zero-width characters that can
# make a line read as something else
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")


def clean_text(text, limit: int = 8192) -> str:
    """`text` with escape sequences and control characters removed (newlines and tabs kept), cut to `limit`."""
    # lone surrogates (a file name that is not UTF-8) would crash the print: they become "?"
    text = str(text).encode("utf-8", "replace").decode("utf-8")
    text = _CONTROL.sub("", _ANSI.sub("", text))
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return text


def clean_line(text, limit: int = 2000) -> str:
    """clean_text on one line (newlines and tabs become spaces)."""
    return clean_text(str(text).replace("\n", " ").replace("\r", " ").replace("\t", " "), limit)


def cell(text, limit: int = 200) -> str:
    """clean_line for a spreadsheet cell: a leading =, +, - or @ (a formula to a spreadsheet) gets a quote."""
    text = clean_line(text, limit)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
