"""jinja2 templates shipped with the package (found through importlib.resources)."""
