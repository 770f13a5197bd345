"""Storage on Piccolo: the same tables and queries on SQLite (embedded) and Postgres."""
