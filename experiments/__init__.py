"""Declarative experiments (grids of cells with quick and full profiles)."""
