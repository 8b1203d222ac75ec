"""Atomics rules: 16-bit floating-point atomics HIP lacks (ATM001), broken hand-made ones
(ATM002), and the fast/safe trade-off of float atomics on AMD (ATM003)."""
