"""The rule catalog: API tables (TSV data under ``api/``) and rule modules, one per rule."""
