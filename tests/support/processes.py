"""Server and worker processes a test starts."""

from __future__ import annotations

import signal
import subprocess


def stop(process: subprocess.Popen, how: signal.Signals = signal.SIGTERM) -> None:
    """SIGTERM (or ``how``: SIGINT, Ctrl-C as a user stops a development server) and wait, as a service manager
    would; killed if it has not stopped after 30 s."""
    process.send_signal(how)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
