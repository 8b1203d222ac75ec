"""The argument-rewrite loader (rules/api/argument_rewrites.tsv -> ApiTables): the `below`
version column, the actions for one arity, and which names ARG001 renames every call of."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrator.apitables import ApiTables

NAMES = ("cuda\thip\tkind\tlibrary\tsection\tcuda_added\tcuda_deprecated\tcuda_removed\t"
         "hip_added\thip_deprecated\thip_removed\texperimental\tsignature\tstatus\n"
         "cudaHostAlloc\thipHostAlloc\tfunction\truntime\tM\t\t\t\t1.6.0\t\t\t\tdiffers\tsupported\n"
         "cudaEventCreate\thipEventCreate\tfunction\truntime\tE\t\t\t\t1.6.0\t\t\t\tidentical\tsupported\n")
HEADER = "cuda\targ\taction\tvalue\tbelow\tnote\n"


def _tables(tmp_path: Path, rows: str) -> ApiTables:
    (tmp_path / "runtime.tsv").write_text(NAMES, encoding="utf-8")
    (tmp_path / "argument_rewrites.tsv").write_text(HEADER + rows, encoding="utf-8")
    return ApiTables(tmp_path)


def test_below_and_arity(tmp_path):
    tables = _tables(tmp_path, "cudaHostAlloc\t0\tcast\t(void**)\t6.4.0\tn\n"
                               "cudaHostAlloc\t2\tappend_argument\t0\t\tn\n")
    cast, append = tables.argument_rewrites["cudaHostAlloc"]
    assert cast.below == (6, 4, 0) and append.below is None
    assert cast.applies((5, 2, 0), 3) and cast.applies((6, 3, 0), 1)
    assert not cast.applies((6, 4, 0), 3)  # the target has the templated overload
    assert append.applies((6, 4, 0), 2) and not append.applies((6, 4, 0), 3)
    assert tables.call_renames == {}


def test_a_name_with_renames_only_keeps_api001_rename(tmp_path):
    """Its rows go to call_renames, under the CUDA and the HIP name (ARG001 renames a call of
    that arity again after API001's rename), and not to argument_rewrites (whose names' calls
    API001 leaves to ARG001)."""
    tables = _tables(tmp_path, "cudaEventCreate\t2\trename\thipEventCreateWithFlags\t\tn\n")
    assert "cudaEventCreate" not in tables.argument_rewrites
    assert tables.call_renames["cudaEventCreate"] is tables.call_renames["hipEventCreate"]
    (rename,) = tables.call_renames["hipEventCreate"]
    assert (rename.cuda, rename.applies((6, 4, 0), 2), rename.applies((6, 4, 0), 1)) == (
        "cudaEventCreate", True, False)


def test_unknown_action_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown action 'wrap'"):
        _tables(tmp_path, "cudaHostAlloc\t0\twrap\tX\t\tn\n")
