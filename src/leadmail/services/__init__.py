"""Use cases: what a client can do, written against ports only."""
