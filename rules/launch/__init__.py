"""Kernel launch rules."""
