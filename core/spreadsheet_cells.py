"""CSV cells a spreadsheet will not run: OWASP's rule for CSV injection. A cell that starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is read as a formula by Excel, LibreOffice and Sheets; a leading
single quote makes it text, and the quote is not shown."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """
    >>> safe_cell("=HYPERLINK(\\"http://x\\")"), safe_cell("@alice"), safe_cell("plain"), safe_cell(0.5)
    ('\\'=HYPERLINK("http://x")', "'@alice", 'plain', 0.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: dict) -> dict:
    return {key: safe_cell(value) for key, value in row.items()}
