"""Rate limits: the RateLimiter port on the `limits` package (a moving window per lane),
kept in this process's memory or in Redis, shared by every process that uses it."""
