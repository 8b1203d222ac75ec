"""WRP001/WRP002: lower warp-sync builtins for ROCm releases that lack them."""

from __future__ import annotations

from migrator.diagnostics import Diagnostic, Edit, Fix
from migrator.rule import Marker, Rule, RuleContext
from migrator.semantic.calls import find_name, lexical_call
from migrator.versions import format_version

from ..markers import marker_fix


class WarpSyncLowering(Rule):
    """Lower ``__shfl_*_sync``, ``__ballot_sync``, ``__any_sync``, ``__all_sync`` and
    ``__syncwarp`` to the forms older ROCm releases have.

    ## What it does
    HIP has the ``*_sync`` warp builtins only from ROCm 6.2. For an older target (``--rocm``),
    each call is rewritten to the non-sync builtin without its mask argument
    (``__shfl_down_sync(mask, v, 1)`` -> ``__shfl_down(v, 1)``, ``__ballot_sync(mask, p)`` ->
    ``__ballot(p)``) and ``__syncwarp()`` to a wavefront barrier. The lowering table is
    ``rules/api/lowerings.tsv`` (its ``WRP001`` rows). Calls inside ``#define`` bodies are
    reported (WRP002), not rewritten.

    ## Why is this bad on AMD
    The sync forms do not exist before ROCm 6.2, so the code does not build. The non-sync forms
    act on all active lanes of the 64-lane wavefront; they equal the sync form when the mask names
    every active lane (the usual ``0xffffffff`` in full-warp code), not for partial masks. Check
    the message for each site: a mask narrower than the wavefront needs a person (see WAV rules).

    ## Example
    ```cpp
    v += __shfl_down_sync(0xffffffff, v, offset);
    ```

    ## Use instead
    ```cpp
    v += __shfl_down(v, offset);
    ```

    ## Fix safety
    Safe for full masks, which is what the rewrite assumes; the diagnostic names the dropped mask
    so that partial masks can be reviewed.
    """

    code = "WRP001"
    extra_codes = ("WRP002",)
    category = "conversion"
    attention_codes = ("WRP002",)
    name = "warp-sync-lowering"
    summary = "warp-sync builtin missing in the target ROCm"
    family = "wavefront"
    fix = "sometimes"

    def check(self, ctx: RuleContext):
        rocm = ctx.settings.rocm
        lowerings = {name.encode(): low for name, low in ctx.tables.lowerings.items()
                     if low.rule == self.code and low.applies(rocm) and name.encode() in ctx.data}
        target = format_version(rocm)
        for name, start, end in find_name(ctx, lowerings):
            low = lowerings[name]
            cuda = name.decode()
            call = lexical_call(ctx, start, end)
            if call is None:
                continue
            if call == "macro":
                text = (f"{cuda} {low.lacking()} (target {target}): use {low.replacement} in "
                        "this macro by hand")
                yield Diagnostic("WRP002", text, start, end,
                                 marker_fix(ctx, start, Marker("WRP002", text)), symbol=cuda,
                                 library="device")
                continue
            edits = [Edit(start, end, low.replacement.encode())]
            message = f"{cuda} -> {low.replacement} (ROCm {target} lacks {cuda})"
            drop = low.drop_argument
            if drop is not None and drop < len(call.arguments):
                args = call.arguments
                begin, finish = args[drop]
                mask = ctx.data[begin:finish].decode("utf-8", "replace")
                if len(args) > drop + 1:
                    # drop "mask," and the blanks after the comma; comments after it stay
                    end = ctx.data.index(b",", finish) + 1
                    while ctx.data[end : end + 1] in (b" ", b"\t"):
                        end += 1
                    edits.append(Edit(begin, end, b""))
                else:
                    edits.append(Edit(begin, finish, b""))
                message += f"; mask {mask} dropped: correct only if it names every active lane"
            yield Diagnostic("WRP001", message, start, end,
                             Fix(f"lower to {low.replacement}", tuple(edits)), symbol=cuda,
                             library="device", severity="warning")
