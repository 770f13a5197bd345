"""The dashboard under /app/: server-rendered pages for a school's staff, signed in as
users (not API keys), reaching the same services the API does."""
