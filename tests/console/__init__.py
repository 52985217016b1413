"""The operator console: investigation, permissions, support staff's view, export and erasure, shared spaces and the
login throttle — through Django's test client and in a real browser."""
