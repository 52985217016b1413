"""Server and worker processes a test starts."""

from __future__ import annotations

import signal
import subprocess


def stop(process: subprocess.Popen) -> None:
    """SIGTERM and wait, as a service manager would; killed if it has not stopped after 30 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
