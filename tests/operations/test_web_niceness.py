"""A bad ENGRAM_WEB_NICENESS stops gunicorn with a message naming it, before anything is served."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = "def app(environ, start_response):\n    start_response('200 OK', [])\n    return [b'ok']\n"


def serve(tmp_path, niceness: str):
    (tmp_path / "review_tiny_app.py").write_text(APP)
    env = {**os.environ, "ENGRAM_WEB_NICENESS": niceness, "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    return subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", str(ROOT / "config/gunicorn.py"), "--bind", "127.0.0.1:0",
         "--workers", "1", "review_tiny_app:app"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize("niceness", ["ten", "", "1.5"])
def test_a_bad_niceness_stops_the_server_with_a_message_naming_the_setting(tmp_path, niceness):
    """Not "invalid literal for int()" in a worker's traceback after the master has preloaded the application:
    gunicorn stops while reading its configuration."""
    result = serve(tmp_path, niceness)
    assert result.returncode != 0
    assert f"ENGRAM_WEB_NICENESS must be a whole number (0 for none), not {niceness!r}" in result.stderr
    assert "Booting worker" not in result.stderr
