"""Outbound email: the httpx sender with one dialect per provider, and the console sender.

The provider registry (providers.py) is imported by config.py; this package therefore
imports none of its modules itself, so reading the settings loads neither httpx nor a cycle
back into config.
"""
