"""Every CSV the hub writes, as a spreadsheet reads it: text that never starts a formula, in any
locale, and numbers as numbers.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (OWASP's CSV
injection), and some take the look-alikes of those too (fullwidth ``＝``, the minus sign
``−``). Where a cell starts depends on who reads the file: Excel and LibreOffice import a text
file split at a comma, a semicolon (the list separator in DE, FR, NL...), a tab, a space or
another character the reader picks, whatever the file's quotes meant for another separator. So
a formula start is neutralised (a quote mark put before it, which makes the cell text) at the
start of a cell and after every character a reader may split at, past any blanks, control
characters and quotes in between, which a spreadsheet skips.
"""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Iterable
from typing import Any, TextIO

# What starts a formula, compared with each character's NFKC form (which folds the fullwidth,
# small and super/subscript forms into these) ...
FORMULA_STARTS = frozenset("=+-@")
# ... and the look-alikes NFKC leaves as they are: the minus sign (and the super/subscript
# minus, whose NFKC it is), the dashes and hyphens, the heavy plus and minus, the modifier
# minus, the short and heavy equals.
FORMULA_LOOKALIKES = frozenset("\u2212\u2010\u2011\u2012\u2013\u2014\u2015\u2e3a\u2e3b"
                               "\u02d7\u2795\u2796\ua78a\U0001f7f0")
# Where a reader may split a line into cells: the comma, the semicolon, the tab, the pipe,
# the Arabic comma and semicolon; and every blank and line break (a space is one of Excel's and
# LibreOffice's import separators; a line break ends a row for a careless reader).
SEPARATORS = frozenset(",;|\t\u060c\u061b")
# Written before a formula start: the cell is then text.
TEXT_MARK = "'"


def _nfkc(char: str) -> str:
    return unicodedata.normalize("NFKC", char)


def starts_formula(char: str) -> bool:
    """Whether a spreadsheet may take ``char`` at a cell's start as a formula's."""
    first = _nfkc(char)[:1]
    return first in FORMULA_STARTS or first in FORMULA_LOOKALIKES


def splits_cells(char: str) -> bool:
    """Whether a reader may split a line at ``char`` (or at what its NFKC form begins with:
    a fullwidth comma)."""
    return any(c in SEPARATORS or c.isspace() for c in char + _nfkc(char))


def skipped(char: str) -> bool:
    """What a spreadsheet may pass over before a cell's first character: blanks, control and
    format characters (tab, CR, LF, a zero-width space, a byte order mark), any other
    character of no visible form (unassigned, private use), and double quotes."""
    return unicodedata.category(char)[0] in "ZC" or _nfkc(char) == '"'


def safe_cell(text: str) -> str:
    """``text`` as a cell no spreadsheet runs as a formula, however it splits the line: a
    quote mark before each formula start at the beginning or after a separator (blanks,
    control characters and quotes between them skipped). The one function every CSV the hub
    writes passes its text through (``cells``)."""
    out = []
    at_cell_start = True
    for char in text:
        if at_cell_start and starts_formula(char):
            out.append(TEXT_MARK)
            at_cell_start = False
        elif splits_cells(char):
            at_cell_start = True
        elif not skipped(char):
            at_cell_start = False
        out.append(char)
    return "".join(out)


def cells(values: Iterable[str | int | float | None]) -> list[str | int | float]:
    """A row's values as written: text made safe (``safe_cell``), numbers as numbers (the
    writer leaves them unquoted: a spreadsheet reads them as numbers), None as an empty
    cell."""
    row: list[str | int | float] = []
    for value in values:
        if value is None:
            row.append("")
        elif isinstance(value, str):
            row.append(safe_cell(value))
        elif isinstance(value, bool):  # (an int to Python, but no number to a reader)
            row.append(safe_cell(str(value).lower()))
        else:
            row.append(value)
    return row


def csv_writer(out: TextIO) -> Any:
    """The writer of every CSV the hub writes: every text quoted (a separator inside a cell
    splits nothing for a reader that honours quotes), numbers bare, CRLF line ends (RFC
    4180)."""
    return csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_NONNUMERIC)
