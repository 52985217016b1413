"""Django's PostgreSQL backend, with the test database created and dropped by the owner role."""
