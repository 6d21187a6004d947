"""PostgreSQL with a bounded number of connections per process (see `base`)."""
