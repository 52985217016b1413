"""Sections of docs/quality.md written by separate runs (`make eval-long`) and kept by `make eval`.

A section is marked by HTML comments named after its heading, so a rerun replaces it in place and
`make eval`, which rewrites the rest of the page, carries it over unchanged.

>>> marked(["## Long histories", "", "text"])[0]
'<!-- section: long-histories -->'
"""

from __future__ import annotations

import re
from pathlib import Path

REPORT = Path(__file__).resolve().parent.parent / "docs" / "quality.md"
_BLOCK = re.compile(r"<!-- section: ([\w-]+) -->\n.*?<!-- /section: \1 -->\n", re.DOTALL)


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lstrip("#").split(":")[0].strip().lower()).strip("-")


def marked(lines: list[str]) -> list[str]:
    slug = _slug(lines[0])
    return [f"<!-- section: {slug} -->", *lines, f"<!-- /section: {slug} -->"]


def replace_section(lines: list[str], report: Path = REPORT) -> None:
    """Write the section (its first line is its heading) into the report, in place if it is there."""
    block = "\n".join(marked(lines)) + "\n"
    text = report.read_text() if report.exists() else ""
    slug = _slug(lines[0])
    pattern = re.compile(rf"<!-- section: {re.escape(slug)} -->\n.*?<!-- /section: {re.escape(slug)} -->\n", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    report.write_text(text)


def kept_sections(report: Path = REPORT) -> list[str]:
    """The marked sections of the current report, as lines, for a full rewrite to carry over."""
    if not report.exists():
        return []
    return [line for match in _BLOCK.finditer(report.read_text()) for line in [*match.group(0).splitlines(), ""]]


def pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def account_section_main(data: Path, database: str, evaluate, report_lines) -> None:
    """The command line of a section built from the accounts in ``data``: ``evaluate(accounts)`` in a throwaway
    database, ``report_lines(result, elapsed, revision, machine)`` written to the report (``--no-write``:
    only printed)."""
    import argparse
    import json
    import time

    from bench.harness import git_revision, machine_line, setup_django, throwaway_database

    parser = argparse.ArgumentParser()
    parser.add_argument("--no-write", action="store_true", help="print the section, leave docs/quality.md alone")
    args = parser.parse_args()
    setup_django()
    accounts = json.loads(data.read_text())["accounts"]
    started = time.perf_counter()
    with throwaway_database(database):
        result = evaluate(accounts)
        lines = report_lines(result, time.perf_counter() - started, git_revision(), machine_line())
    if not args.no_write:
        replace_section(lines)
    print("\n".join(lines))


def leak_lines(per_language: dict) -> list[str]:
    """The questions that returned something, per language (``{"leaks": [(question, contents)]}``), or none."""
    leaks = [(language, q, found) for language, result in per_language.items() for q, found in result["leaks"]]
    return [f"- {language} “{q}” → {found[:3]}" for language, q, found in leaks] or ["- none"]
