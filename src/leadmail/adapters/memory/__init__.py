"""In-memory adapters: real implementations of the ports, kept in dicts, for tests."""
