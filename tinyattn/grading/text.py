"""Learner-controlled text made safe to show: before it reaches a terminal, a CSV, JSON or HTML.

Whatever the learner's code prints, raises or names (a message, a class name, a file name) is
cleaned once, where it enters the judge: control characters (ANSI escape sequences, carriage
returns, the C1 range), every Unicode format character (bidi controls, zero-width and tag
characters, the soft hyphen) and line/paragraph separators are dropped and the length is capped. HTML is
escaped where HTML is written (html.escape in the notebook report).
"""
from __future__ import annotations

import re
import unicodedata

# C0 controls but tab and newline, DEL and C1 controls: the ASCII-range fast path
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
# Unicode categories dropped: every format character (Cf: bidi marks, embeddings, overrides and
# isolates, U+061C, the soft hyphen, zero-width spaces and joiners, the word joiner, invisible
# operators, tag characters, the BOM), line and paragraph separators (Zl, Zp: U+2028, U+2029),
# controls (Cc), surrogates (Cs), private-use (Co) and unassigned code points (Cn)
DROPPED = frozenset({"Cf", "Zl", "Zp", "Cc", "Cs", "Co", "Cn"})


def _shown(ch: str) -> bool:
    return ch in "\n\t" or unicodedata.category(ch) not in DROPPED


def clean_text(text, limit: int = 8192) -> str:
    """`text` with escape sequences and every control, format (bidi, zero-width, tag, soft hyphen),
    separator, private-use and unassigned character removed (newlines and tabs kept), cut to `limit`.

    The one place where text the learner controls is made safe to show."""
    # lone surrogates (a file name that is not UTF-8) would crash the print: they become "?"
    text = str(text).encode("utf-8", "replace").decode("utf-8")
    text = _CONTROL.sub("", _ANSI.sub("", text))
    if not text.isascii():
        text = "".join(ch for ch in text if ch.isascii() or _shown(ch))
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
