"""A turn from request to written memories: the turn loop, its reliability, its cost and the message vector the worker
reuses (memory/turns)."""
