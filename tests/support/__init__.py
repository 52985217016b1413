"""Helpers the tests share (imported, never collected: no ``test_`` names). A test file imports from here or uses
``conftest.py``'s fixtures, never another test file (tests/test_layout.py holds it)."""
