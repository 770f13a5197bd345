"""Helpers shared by the test suites: envelope.py (the API's paths, fields and envelope
assertions, for api/ and e2e/), catalog.py (the packaged templates) and standin.py (the
provider stand-in, which the benchmark uses too)."""
