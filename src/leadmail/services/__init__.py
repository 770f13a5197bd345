"""Use cases: what a client can do, written against ports only.

The records a send passes between its steps (the request, the plan, each delivery's
outcome, the result) are slotted dataclasses, not frozen ones: they are made on every
send and only read after, and a frozen dataclass sets each field through
``object.__setattr__``, several times the cost of a plain slot (bench/README.md,
"Session 8"). Domain types stay frozen.
"""
