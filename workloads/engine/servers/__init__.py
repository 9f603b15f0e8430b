"""Database servers on the host: managed installations, the PostgreSQL lifecycle, applying a
profile and reading the effective settings."""
