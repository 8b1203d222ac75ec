"""Migration phase reports for a team lead: ``rocmigrate report SRC -o REPORT_DIR``.

One library call, ``build_report(ReportOptions)``, returns the report as a document (plain
data: the JSON schema of docs/report.md); the renderers in migrator/output (report_json,
report_markdown, report_html) write it. The findings are the engine's (the conversion run in
memory, nothing written); the report adds the inventory, the effort model, the phase plan,
owners from git and the history.
"""

from .core import HistoryOptions, ReportError, ReportOptions, SCHEMA_VERSION, build_report
from .effort import EffortModel, ModelError, model_from_table

__all__ = ["HistoryOptions", "ReportError", "ReportOptions", "SCHEMA_VERSION", "build_report",
           "EffortModel", "ModelError", "model_from_table"]
