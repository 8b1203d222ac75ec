"""Renderers: one pure function per output format."""
