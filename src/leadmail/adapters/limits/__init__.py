"""Rate limits: the RateLimiter port (a moving window per lane), its counts and holds kept
in this process's memory or in Redis by the `limits` package, or in any other LimitStorage
handed to it (Postgres: adapters/db/rate_limits.py), shared by every process that uses it."""
