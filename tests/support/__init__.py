"""Helpers the tests share (imported, never collected: no ``test_`` names)."""
