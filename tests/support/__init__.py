"""Helpers shared by test suites and the benchmark: the provider stand-in."""
