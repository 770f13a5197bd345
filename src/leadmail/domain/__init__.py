"""Pure rules and types: no I/O, no framework, no driver."""
