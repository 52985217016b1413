"""The examples in docstrings are tests too: every ``>>>`` line in the project's modules runs here, so an example
that stops being true fails ``make test`` instead of misleading the next reader."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("api", "console", "core", "mcp_server", "memory", "tenants")
# An example line that runs: a prompt at the start of a line, not marked to be skipped (an example that needs a
# live space) and not ">>>" inside a string.
EXAMPLE = re.compile(r"^\s*>>> (?!.*doctest: \+SKIP)", re.MULTILINE)


def modules_with_examples() -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if EXAMPLE.search(path.read_text(encoding="utf-8")):
                found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_the_examples_are_found():
    assert len(modules_with_examples()) >= 20


@pytest.mark.django_db
@pytest.mark.parametrize("module", modules_with_examples())
def test_the_examples_in_a_docstring_hold(module):
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0, f"{module}: {result.failed} of {result.attempted} failed"
