"""The inbound adapter: Litestar controllers, wire schemas, auth and the error table."""
