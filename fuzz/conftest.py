"""The fuzz run uses the test suite's fixtures (two tenants, their spaces and keys)."""

from tests.conftest import *  # noqa: F403
