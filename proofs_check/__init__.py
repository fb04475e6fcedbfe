"""Per-claim checks (one module per paper) that give every catalogue claim a verdict.

Filled in by the verification work; see README.
"""
