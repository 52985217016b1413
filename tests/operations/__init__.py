"""Running Engram: the first run, the served processes, management commands, telemetry and traces, database
connections, and faults injected for real."""
