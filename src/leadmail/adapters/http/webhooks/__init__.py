"""The providers' webhooks: their proofs (signatures.py) and their routes (routes.py)."""
