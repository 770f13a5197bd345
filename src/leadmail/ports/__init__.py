"""Interfaces the core needs from the outside world. Domain types in and out."""
