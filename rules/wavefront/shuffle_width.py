"""WAV004: shuffles with an explicit width of 32."""

from __future__ import annotations

from migrator.diagnostics import Diagnostic
from migrator.rule import Rule, RuleContext
from migrator.semantic.constants import integer_literal

from ..markers import unproven_fix
from .common import SHUFFLE_WIDTH, builtin_names, call_arguments, marker_site, stable_symbol

_NAMES = frozenset(name.encode() for name in SHUFFLE_WIDTH)


class ShuffleWidth(Rule):
    """Report shuffles whose explicit width is a warp size other than the wavefront's.

    ## What it does
    Checks the optional ``width`` argument of ``__shfl``, ``__shfl_up``, ``__shfl_down``,
    ``__shfl_xor`` and their ``_sync`` forms. A literal 32 (with 64-lane wavefronts; 64 with
    32-lane ones) is reported with a ``// rocmigrate WAV004:`` marker: the shuffle then works
    on sub-groups of the wavefront.

    ## Why is this bad on AMD
    ``__shfl_down(v, 1, 32)`` on a 64-lane wavefront exchanges values within two independent
    32-lane halves. Code that passed 32 to mean "the whole warp" now reduces or broadcasts over
    half a wavefront, and lane 0 never sees lanes 32-63. Where 32-lane groups are intended, the
    code is right and the finding can be suppressed.

    ## Example
    ```cpp
    v += __shfl_xor_sync(mask, v, offset, 32);
    ```

    ## Use instead
    ```cpp
    v += __shfl_xor_sync(mask, v, offset);  // the whole wavefront (width = warpSize)
    ```

    ## Fix safety
    No fix: whether 32-lane groups are intended is a design decision.
    """

    code = "WAV004"
    name = "shuffle-width"
    summary = "shuffle with an explicit 32-lane width"
    family = "wavefront"
    fix = "never"

    def check(self, ctx: RuleContext):
        lanes = ctx.settings.wavefront_size
        for name, start, end in builtin_names(ctx, _NAMES):
            shuffle = name.decode()
            index = SHUFFLE_WIDTH[shuffle]
            spans = call_arguments(ctx, end) or []
            width = [(b, e, ctx.data[b:e].decode("utf-8", "replace")) for b, e in spans[index:index + 1]]
            for begin, finish, text in width:
                literal = integer_literal(text)
                if literal is not None and literal[0] in (32, 64) and literal[0] != lanes:
                    message = (f"{shuffle} with width {text}: on a {lanes}-lane wavefront it "
                               f"shuffles within groups of {literal[0]} lanes")
                    yield Diagnostic("WAV004", message, begin, finish,
                                     unproven_fix(ctx, marker_site(ctx, start), "WAV004", message),
                                     library="device", symbol=stable_symbol(ctx, shuffle))
