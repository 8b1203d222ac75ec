"""The project files a source includes (migrator.workspace.includes), as the runner gives them to
rules, and the cache's dependency on them: editing a header converts its includers again."""

from __future__ import annotations

import json
from pathlib import Path

from migrator.runner import RunOptions, run
from migrator.settings import Settings
from migrator.workspace.includes import MAX_FILES, included_files, local_includes, resolve

WARP_HEADER = (b"#pragma once\n__device__ inline float warp_sum(float v) {\n"
               b"  return v + __shfl_down_sync(0xffffffffffffffffull, v, 1);\n}\n")
PLAIN_HEADER = b"#pragma once\n__device__ inline float warp_sum(float v) { return v; }\n"
MAIN = (b'#include <cuda_runtime.h>\n#include "reduce.cuh"\n'
        b"__global__ void k(float *p) { p[0] = warp_sum(p[0]); }\n")


def _files(tree: dict[str, bytes]):
    return tree.keys(), tree.get


def test_resolves_beside_the_file_then_from_the_root_and_never_outside():
    known = {"src/a.h", "include/b.h", "c.h"}
    assert resolve("src/main.cu", "a.h", known) == "src/a.h"
    assert resolve("src/main.cu", "../include/b.h", known) == "include/b.h"
    assert resolve("src/main.cu", "include/b.h", known) == "include/b.h"  # from the root
    assert resolve("src/main.cu", "c.h", known) == "c.h"
    assert resolve("main.cu", "../c.h", known) is None  # leaves the tree
    assert resolve("src/main.cu", "missing.h", known) is None


def test_follows_includes_transitively_once_each_with_the_include_that_leads_there():
    tree = {"main.cu": b'#include "a.h"\n#include <vector>\n  #  include "b.h"\n',
            "a.h": b'#include "c.h"\n', "b.h": b'#include "a.h"\n#include "main.cu"\n',
            "c.h": b"// #include \"b.h\" (a comment)\n", "d.h": b""}
    found = included_files("main.cu", tree["main.cu"], *_files(tree))
    assert [(f.rel, f.spelled) for f in found] == [("a.h", "a.h"), ("b.h", "b.h"),
                                                    ("c.h", "a.h")]
    assert found[0].data == tree["a.h"]


def test_unreadable_files_are_not_followed_and_the_count_is_bounded():
    tree = {"main.cu": b'#include "gone.h"\n#include "h0.h"\n'}
    tree.update({f"h{i}.h": f'#include "h{i + 1}.h"\n'.encode() for i in range(MAX_FILES + 50)})
    known = set(tree) | {"gone.h"}
    found = included_files("main.cu", tree["main.cu"], known, tree.get)
    assert "gone.h" not in {f.rel for f in found}
    assert len(found) == MAX_FILES


def test_local_includes_on_disk_beside_the_includer_then_in_the_programs_folder(tmp_path: Path):
    """As validate and harness follow a program's local headers: a header reached from another
    folder finds its includes beside it, else in the program's folder (its -I); an absolute
    path or one leaving the tree is not the tree's."""
    tree = {"app/main.cu": '#include "../lib/a.h"\n#include "/etc/hostname"\n',
            "lib/a.h": '#include "b.h"\n#include "c.h"\n#include "../../outside.h"\n',
            "lib/b.h": "", "app/c.h": '#include "d.h"\n', "app/d.h": ""}
    root = tmp_path / "tree"
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (tmp_path / "outside.h").write_text("")
    assert local_includes(root, "app/main.cu") == {"app/main.cu", "lib/a.h", "lib/b.h",
                                                   "app/c.h", "app/d.h"}


def _convert(src: Path, out: Path) -> dict:
    result = run(RunOptions(src, out, jobs=1), Settings())
    return {r.rel: r.status for r in result.results}


def test_a_file_including_a_warp_sync_header_defines_the_macro_and_follows_its_edits(
        tmp_path: Path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.cu").write_bytes(MAIN)
    (src / "reduce.cuh").write_bytes(WARP_HEADER)
    assert _convert(src, out) == {"main.cu": "converted", "reduce.cuh": "converted"}
    assert (out / "main.cu").read_bytes().startswith(
        b"#define HIP_ENABLE_WARP_SYNC_BUILTINS\n#include <hip/hip_runtime.h>\n")
    cache = json.loads((out / ".rocmigrate" / "cache.json").read_text())
    assert list(cache["files"]["main.cu"]["includes"]) == ["reduce.cuh"]
    assert _convert(src, out) == {"main.cu": "cached", "reduce.cuh": "cached"}
    # the header stops calling the builtin: its includer is converted again and loses the macro
    (src / "reduce.cuh").write_bytes(PLAIN_HEADER)
    assert _convert(src, out) == {"main.cu": "converted", "reduce.cuh": "converted"}
    assert b"HIP_ENABLE_WARP_SYNC_BUILTINS" not in (out / "main.cu").read_bytes()
    # and calls it again
    (src / "reduce.cuh").write_bytes(WARP_HEADER)
    assert _convert(src, out) == {"main.cu": "converted", "reduce.cuh": "converted"}
    assert b"HIP_ENABLE_WARP_SYNC_BUILTINS" in (out / "main.cu").read_bytes()
    # a header deleted: its includer is converted again too
    (src / "reduce.cuh").unlink()
    assert _convert(src, out) == {"main.cu": "converted"}


def test_older_targets_and_single_files_get_no_macro(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.cu").write_bytes(MAIN)
    (src / "reduce.cuh").write_bytes(WARP_HEADER)
    run(RunOptions(src, tmp_path / "old", jobs=1), Settings(rocm=(5, 2, 0)))
    assert b"HIP_ENABLE" not in (tmp_path / "old" / "main.cu").read_bytes()
    run(RunOptions(src / "main.cu", tmp_path / "one.cu"), Settings())
    assert b"HIP_ENABLE" not in (tmp_path / "one.cu").read_bytes()


def test_converting_an_output_again_writes_its_support_header_anew(tmp_path: Path):
    """A support header in the tree (an output converted again) is not converted over the one
    the runner writes: it is skipped, and the fresh one is written."""
    from migrator import support

    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(b"__global__ void k(unsigned *p) { p[0] = __vadd2(p[0], 1u); }\n")
    run(RunOptions(src, tmp_path / "once", jobs=1), Settings())
    header = tmp_path / "once" / "rocmigrate_simd.h"
    fresh = header.read_bytes()
    assert fresh == support.render("rocmigrate_simd.h", Settings())
    header.write_bytes(fresh.replace(b"__NVCC__", b"__CUDACC__"))  # a name rules would rewrite
    result = run(RunOptions(tmp_path / "once", tmp_path / "twice", jobs=1), Settings())
    statuses = {r.rel: r.status for r in result.results}
    assert statuses["rocmigrate_simd.h"] == "skipped"
    assert (tmp_path / "twice" / "rocmigrate_simd.h").read_bytes() == fresh
