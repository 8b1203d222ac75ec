"""Stream rules."""
