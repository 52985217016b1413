"""The README's architecture map is the tree: every package it names exists, every package that exists is named."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_map() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Architecture") :]
    return section[section.index("```") + 3 : section.index("```", section.index("```") + 3)]


def packages(under: Path) -> set[str]:
    return {
        p.name
        for p in under.iterdir()
        if p.is_dir() and (p / "__init__.py").exists() and p.name not in ("migrations", "management", "templatetags")
    }


def test_every_top_level_package_is_on_the_map_and_every_one_on_the_map_exists():
    named = set(re.findall(r"^([a-z_]+)/", readme_map(), re.MULTILINE)) | set(
        re.findall(r"\| ([a-z_]+)/", readme_map())
    )
    named |= set(re.findall(r"→ ([a-z_]+)/", readme_map()))
    assert named == packages(ROOT) - {"tests", "fuzz"}


def test_every_memory_subpackage_is_on_the_map_with_modules_that_exist():
    rows = re.findall(r"^  ([a-z_]+)/\s", readme_map(), re.MULTILINE)
    assert set(rows) == packages(ROOT / "memory")
    for name in rows:
        assert (ROOT / "memory" / name / "__init__.py").exists(), name


def test_no_test_file_imports_another_test_file():
    """Shared steps live in tests/support/ or conftest.py: a test file is read alone, and moving one never breaks
    another."""
    importing = {
        path.name: found
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        if (found := re.findall(r"^\s*(?:from|import) tests\.(test_\w+)", path.read_text(), re.MULTILINE))
    }
    assert importing == {}
