"""Re-wrap every space key under the newest version of its KEK id, in small committed batches.

Rows are never touched: only each space's wrapped data key changes. Each batch commits on its
own, so an interrupted run loses nothing and the next run continues with what is left.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Q

from tenants import scope
from tenants.keyring import get_keyring
from tenants.models import SpaceKey
from tenants.space_keys import rewrap_to_newest
from tenants.tenant_admin import all_tenant_ids

BATCH_SIZE = 200


def _outdated(keyring) -> Q:
    condition = Q(pk__in=[])
    for key_id in keyring.key_ids():
        newest_version, _ = keyring.newest(key_id)
        condition |= Q(kek_id=key_id, kek_version__lt=newest_version)
    return condition


def count_outdated() -> int:
    keyring = get_keyring()
    total = 0
    for tenant_id in all_tenant_ids():
        with scope.tenant_scope(tenant_id):
            total += SpaceKey.objects.filter(_outdated(keyring)).count()
    return total


def rotate_all(progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    keyring = get_keyring()
    total = count_outdated()
    done = 0
    progress(done, total)
    for tenant_id in all_tenant_ids():
        while True:
            with scope.tenant_scope(tenant_id):
                batch = list(SpaceKey.objects.select_for_update().filter(_outdated(keyring))[:BATCH_SIZE])
                for row in batch:
                    done += rewrap_to_newest(row)
            if not batch:
                break
            progress(done, total)
    return done
