"""Password hashing (ports/passwords.py) with argon2-cffi."""
