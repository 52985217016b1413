"""LoCoMo's development part as the evaluations read it: where it is, its sessions and its evidence ids.

Read from ``../shared/data/locomo-dev/`` at run time (CC BY-NC 4.0, evaluation only: never copied into the
repository).
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json"


def dia_ids(evidence: str) -> list[str]:
    """Evidence ids as the turns spell them: "D:11:26" → "D11:26", "D30:05" → "D30:5", several in one string.

    >>> dia_ids("D8:6; D9:17")
    ['D8:6', 'D9:17']
    >>> dia_ids("D:11:26")
    ['D11:26']
    """
    found = []
    for session, turn in re.findall(r"D:?(\d+):(\d+)", evidence):
        found.append(f"D{int(session)}:{int(turn)}")
    return found


def session_date(text: str) -> datetime.datetime:
    """ "1:56 pm on 8 May, 2023" → an aware datetime."""
    return datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=datetime.UTC)


def sessions(conversation: dict) -> list[tuple[int, datetime.datetime, list[dict]]]:
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    return [(n, session_date(conversation[f"session_{n}_date_time"]), conversation[f"session_{n}"]) for n in numbers]
