"""Engram's tests, one folder per capability. conftest.py holds the fixtures every test shares and support/ the
helpers; test_layout.py and test_doctests.py check the project as a whole."""
