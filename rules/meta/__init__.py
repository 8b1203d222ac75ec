"""Rules about rocmigrate itself (suppression hygiene)."""
