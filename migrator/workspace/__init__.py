"""One workspace for every command: the settings resolved once (command-line flags, then the
configuration file, then the defaults: the same keys for ``convert``, ``lint`` and
``validate``) and one discovery of the files a command works on.

Entry point: ``open_workspace(paths, flags)``.
"""

from __future__ import annotations

from .resolve import Flags, Workspace, WorkspaceError, open_workspace

__all__ = ["Flags", "Workspace", "WorkspaceError", "open_workspace"]
