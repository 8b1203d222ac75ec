"""Trees made of real code replicated to a size: the speed issue's API-dense tree (the
project's own probe kernels, ``kernels/``, copied with varied identifiers) and its samples-like
tree (many small programs, each in its folder with its headers and build file: HeCBench's CUDA
programs and NVIDIA's developer-blog samples from the corpus, copied round after round).

Each copy sits in its own folder, so the copies' relative includes still find their headers;
names a copy declares get the copy's suffix (``reduce_sum`` -> ``reduce_sum_c7``), consistently
across its files, so no two copies are the same text. CUDA, C and C++ names are kept, and so
are the languages' keywords: a copy parses as its original does. Files that are not UTF-8 are
left out (torch's hipify cannot read them). The same arguments give the same bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

from .template import write_tree

_REPO = Path(__file__).resolve().parents[2]
KERNELS = _REPO / "kernels"
CORPUS = _REPO.parent / "shared" / "corpus"  # development material beside the checkout
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c", ".cxx", ".hh", ".inl")
BUILD_NAMES = ("Makefile", "CMakeLists.txt")

# a name declared after a type: `float *grad`, `__global__ void reduce_rows(`, `int n =`
_DECLARED = re.compile(
    rb"\b(?:void|int|float|double|char|bool|size_t|unsigned|long|short|auto|dim3|half|"
    rb"float[1-4]|int[1-4]|uint[1-4]?|uint32_t|uint64_t|int64_t|T|cudaStream_t|cudaEvent_t)"
    rb"[ \t]*[*&]*[ \t]+[*&]*([A-Za-z_]\w*)")
_KEPT = re.compile(rb"^(?:cuda|cu|CU|nv|__|std|thrust|cub|warp|thread|block|grid|main$|operator)")
# C and C++ keywords (``unsigned long long x`` reads ``long`` as the declared name): a copy
# that renamed one would no longer parse as the program does
_KEYWORDS = frozenset(b"""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires restrict return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try typedef
    typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    """.split())


def declared_names(texts: list[bytes]) -> list[bytes]:
    """The names the files declare that a copy may rename (longest first)."""
    names = {m.group(1) for text in texts for m in _DECLARED.finditer(text)}
    return sorted((n for n in names
                   if not _KEPT.match(n) and n not in _KEYWORDS and len(n) > 2),
                  key=lambda n: (-len(n), n))


def _renamer(names: list[bytes], suffix: bytes):
    if not names:
        return lambda text: text
    pattern = re.compile(rb"\b(" + b"|".join(map(re.escape, names)) + rb")\b")
    return lambda text: pattern.sub(lambda m: m.group(1) + suffix, text)


def _program_files(folder: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if not (path.name.endswith(SOURCE_SUFFIXES) or path.name in BUILD_NAMES):
            continue
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found[path.relative_to(folder).as_posix()] = data
    return found


def _replicate(root: Path, programs: list[tuple[str, dict[str, bytes]]], total_lines: int,
               vary: bool) -> dict:
    files: dict[str, str] = {}
    lines = copy = 0
    while lines < total_lines:
        for name, program in programs:
            suffix = f"_c{copy}".encode()
            rename = _renamer(declared_names(list(program.values())), suffix) if vary \
                else (lambda text: text)
            for rel, data in program.items():
                text = (data if rel.endswith(BUILD_NAMES) else rename(data)).decode("utf-8")
                files[f"copy_{copy:03d}/{name}/{rel}" if name else f"copy_{copy:03d}/{rel}"] = text
                lines += text.count("\n")
            if lines >= total_lines:
                break
        copy += 1
    return write_tree(root, files)


def generate_probe_corpus(root: Path, total_lines: int, seed: int = 0) -> dict:
    """kernels/ copied, with varied identifiers, until the tree has ``total_lines`` lines."""
    return _replicate(root, [("", _program_files(KERNELS))], total_lines, vary=True)


def generate_samples_corpus(root: Path, total_lines: int, seed: int = 0,
                            corpus: Path = CORPUS) -> dict:
    """HeCBench's CUDA programs and the blog samples, one folder each, copied round after
    round (names varied from the second round) until the tree has ``total_lines`` lines."""
    hecbench = sorted((corpus / "hecbench" / "src").glob("*-cuda"))
    posts = sorted(p for p in (corpus / "projects" / "code-samples" / "posts").iterdir()
                   if p.is_dir()) if (corpus / "projects").is_dir() else []
    programs = [(p.name, _program_files(p)) for p in hecbench + posts]
    programs = [(name, files) for name, files in programs if files]
    if not programs:
        raise SystemExit(f"no corpus at {corpus}: the samples-like tree is built from it")
    return _replicate(root, programs, total_lines, vary=True)
