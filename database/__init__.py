"""The database plumbing under every package: the embedded PostgreSQL, ``DATABASE_URL`` parsing, the two roles
(the owner that migrates, the runtime role row-level security holds) and the backend with its connection pool.
It imports nothing of Engram's, so ``tenants`` and ``config`` both stand on it."""
