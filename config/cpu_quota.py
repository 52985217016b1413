"""The cores this process may use: its CPU affinity, bounded by a container's CPU quota.

Read by the settings (the default of ENGRAM_EMBEDDING_THREADS, memory/text/compute_threads.py)."""

from __future__ import annotations

import os

# A container's CPU quota as the container sees its own cgroup (v2, then v1): the cores it may use
# over time, whatever its affinity mask says (that is usually every core of the host).
CGROUP_CPU_MAX_FILE = "/sys/fs/cgroup/cpu.max"
CGROUP_V1_QUOTA_FILE = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"
CGROUP_V1_PERIOD_FILE = "/sys/fs/cgroup/cpu/cpu.cfs_period_us"


def usable_cores() -> int:
    """The cores this process may use: its affinity, bounded by a CPU quota (whole cores, at least one).

    A container limited to one CPU on an idle 64-core host sees 64 cores and an idle ``/proc/loadavg``;
    64 threads per embedding would spend its quota in a fraction of each period and stall for the rest."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cpu_quota()
    return cores if quota is None else max(1, min(cores, int(quota)))


def _cpu_quota() -> float | None:
    try:
        with open(CGROUP_CPU_MAX_FILE) as cpu_max:
            quota, period = cpu_max.read().split()[:2]
    except (OSError, ValueError):
        try:
            with open(CGROUP_V1_QUOTA_FILE) as quota_file, open(CGROUP_V1_PERIOD_FILE) as period_file:
                quota, period = quota_file.read().strip(), period_file.read().strip()
        except OSError:
            return None
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:  # "max": no quota
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None
