"""Shared memory (LDS) rules."""
