"""Portability rules: code that cannot run on AMD as written."""
