"""Everything that talks to the outside world: HTTP in, databases and providers out."""
