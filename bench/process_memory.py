"""The memory of a group of processes, from /proc: each one's Pss and Rss, and the total of a process
tree (a server and the workers it forked)."""

from __future__ import annotations

import re
from pathlib import Path


def memory_kib(pid: int) -> tuple[int, int]:
    """(Pss, Rss) of one process in KiB, from /proc/<pid>/smaps_rollup; (0, 0) once it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    pss = re.search(r"^Pss:\s+(\d+)", text, re.M)
    rss = re.search(r"^Rss:\s+(\d+)", text, re.M)
    return (int(pss.group(1)) if pss else 0), (int(rss.group(1)) if rss else 0)


def children_of() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    return children


def labelled_processes(roots: dict[str, int]) -> list[tuple[str, int]]:
    """Each started process and its descendants (gunicorn's workers), with a label."""
    children = children_of()
    labelled = []
    for name, pid in roots.items():
        labelled.append((name if name != "gunicorn" else "gunicorn master", pid))
        frontier = list(children.get(pid, []))
        number = 0
        while frontier:
            child = frontier.pop(0)
            number += 1
            labelled.append((f"gunicorn worker {number}" if name == "gunicorn" else f"{name} child {number}", child))
            frontier.extend(children.get(child, []))
    return labelled


def totals_kib(roots: dict[str, int]) -> tuple[int, int]:
    pss = rss = 0
    for _, pid in labelled_processes(roots):
        process_pss, process_rss = memory_kib(pid)
        pss += process_pss
        rss += process_rss
    return pss, rss
