"""API conversion rules (renames, headers, argument rewrites) and their data tables."""
