"""RMG001: a suppression comment that silences nothing."""

from __future__ import annotations

from migrator.rule import Rule, RuleContext


class UnusedSuppression(Rule):
    """Report ``// rocmigrate: ignore[...]`` comments that silence no finding.

    ## What it does
    During ``lint``, the engine checks every ``ignore`` / ``ignore-file`` directive against the
    findings it silenced. A directive that silenced nothing is reported, with a fix that removes
    it (the whole comment when it says nothing else, the whole line when the comment stood
    alone). Directives naming rules that did not run (not selected) are not judged.

    ## Why is this bad on AMD
    A stale suppression hides the next real problem on that line: after a port, the code under
    it changes, and a wave64 hazard introduced there later would go unreported.

    ## Example
    ```cpp
    int lane = threadIdx.x & 63;  // rocmigrate: ignore[WAV001]
    ```

    ## Use instead
    ```cpp
    int lane = threadIdx.x & 63;
    ```

    ## Fix safety
    Safe: only comment text is removed.
    """

    code = "RMG001"
    name = "unused-suppression"
    summary = "suppression comment silences nothing"
    family = "meta"
    fix = "always"

    def check(self, ctx: RuleContext):
        # The engine reports these: only it knows which suppressions were used.
        return ()
