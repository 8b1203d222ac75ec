"""The HIP-CPU prelude (templates/hip_cpu/prelude.h.j2): what AMD's HIP CPU runtime lacks, defined
for the CPU without redefining anything the runtime has, and computing what HIP computes."""

from __future__ import annotations

import math
import re
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, require_path
from hip_cpu import HIP_CPU, build_for_hip_cpu, run_on_hip_cpu
from migrator.templating import render

PROBE = ROOT / "fixtures" / "hip_cpu" / "prelude_probe.cpp"

_CONVERSIONS = [f"__{source}2{target}_{mode}" for source in ("float", "double")
                for target in ("int", "uint", "ll", "ull") for mode in ("rn", "rz", "ru", "rd")]
_DIRECTED = [f"__{source}2{target}_{mode}" for source, target in (
    ("int", "float"), ("uint", "float"), ("ll", "float"), ("ull", "float"), ("ll", "double"),
    ("ull", "double"), ("double", "float")) for mode in ("rd", "ru", "rz")]
_SAME_ATOMICS = [f"atomic{operation}_system" for operation in
                 ("Add", "Sub", "Exch", "Max", "Min", "And", "Or", "Xor")]
_FLOAT_ATOMICS = [f"{kind}Atomic{operation}" for kind in ("unsafe", "safe")
                  for operation in ("Add", "Max", "Min")]
# Every name the prelude defines at global scope; none may be declared by HIP-CPU.
DEFINED = [
    "__int_as_float", "__float_as_int", "__uint_as_float", "__float_as_uint",
    "__double_as_longlong", "__hiloint2double", "__double2hiint", "__double2loint",
    "__fdividef", "__expf", "__exp10f", "__logf", "__log10f", "__sinf", "__cosf", "__tanf",
    "__sincosf", "__saturatef",
    "__fadd_rn", "__fsub_rn", "__fmul_rn", "__fdiv_rn", "__frcp_rn", "__fsqrt_rn", "__frsqrt_rn",
    "__fmaf_rn", "__dadd_rn", "__dsub_rn", "__dmul_rn", "__ddiv_rn", "__drcp_rn", "__dsqrt_rn",
    "__fma_rn", "rsqrtf", "rsqrt",
    *_CONVERSIONS, "__int2float_rn", "__uint2float_rn", "__ll2float_rn", "__ull2float_rn",
    "__int2double_rn", "__uint2double_rn", "__ll2double_rn", "__ull2double_rn",
    "__double2float_rn", *_DIRECTED, "__align__",
    "make_hipFloatComplex", "make_hipDoubleComplex", "make_hipComplex", "hipComplexDoubleToFloat",
    "hipComplexFloatToDouble", "hipCreal", "hipCimag", "hipConj", "hipCsqabs", "hipCabs",
    "hipCadd", "hipCsub", "hipCmul", "hipCdiv", "hipCfmaf", "hipCfma", "half", "half2",
    "__hgt2", "__hge2", "__hgtu2", "__hgeu2",
    "__managed__",
    "__umul24", "__mulhi", "__umulhi", "__mul64hi", "__umul64hi", "__brev", "__brevll",
    "__byte_perm", "__rhadd", "__uhadd", "__urhadd", "__sad", "__usad",
    "min", "max", "__lane_id", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
    "__builtin_amdgcn_wave_barrier", "atomicAddNoRet", *_SAME_ATOMICS, "atomicCAS_system",
    *_FLOAT_ATOMICS,
    *(f"hip{kind}_{axis}" for kind in ("ThreadIdx", "BlockIdx", "BlockDim", "GridDim")
      for axis in "xyz"),
    "hipHostAllocDefault", "hipHostAllocPortable", "hipHostAllocMapped",
    "hipHostAllocWriteCombined", "hipHostAlloc", "hipFreeHost",
    "hipMemcpyPeer", "hipMemcpyPeerAsync", "hipDeviceAttribute_t", "hipDeviceGetAttribute",
    "hipFuncAttribute", "hipFuncCache_t", "hipSharedMemConfig", "hipFuncSetAttribute",
    "hipFuncSetCacheConfig", "hipFuncSetSharedMemConfig", "hipDeviceSetCacheConfig",
    "hipDeviceSetSharedMemConfig",
]
# Names HIP-CPU declares for other parameters, and the first parameter of each overload the
# prelude adds: long long and unsigned long long (HIP-CPU's std::int64_t and std::uint64_t are
# long and unsigned long here, so a long long argument is ambiguous between them), HIP's int
# __hadd beside the __half one, HIP's float and double atomics.
OVERLOADED = {"__ffsll": ["long long", "unsigned long long"],
              "__clzll": ["long long", "unsigned long long"],
              "__hadd": ["int"],
              **{shuffle: ["__half", "__half2"]
                 for shuffle in ("__shfl", "__shfl_up", "__shfl_down", "__shfl_xor")},
              "atomicCAS": ["float*", "double*"], "atomicSub": ["float*", "double*"],
              "atomicExch": ["double*"], "atomicMax": ["float*", "double*"],
              "atomicMin": ["float*", "double*"]}
# The attributes the prelude answers, in the order the probe prints them.
ATTRIBUTES = [
    "EccEnabled", "CanMapHostMemory", "ClockRate", "ComputeMode", "ConcurrentKernels",
    "CooperativeLaunch", "CooperativeMultiDeviceLaunch", "DeviceOverlap", "Integrated",
    "IsMultiGpuBoard", "KernelExecTimeout", "L2CacheSize", "ComputeCapabilityMajor",
    "ComputeCapabilityMinor", "MaxBlockDimX", "MaxBlockDimY", "MaxBlockDimZ", "MaxGridDimX",
    "MaxGridDimY", "MaxGridDimZ", "MaxThreadsPerBlock", "MaxThreadsPerMultiProcessor",
    "MemoryBusWidth", "MemoryClockRate", "MultiprocessorCount", "PciBusId", "PciDeviceId",
    "PciDomainID", "MaxRegistersPerBlock", "ClockInstructionRate", "MaxSharedMemoryPerBlock",
    "SharedMemPerMultiprocessor", "MaxSharedMemoryPerMultiprocessor", "WarpSize",
]


def _prelude() -> str:
    return render("hip_cpu/prelude.h.j2")


def _hip_cpu_sources() -> str:
    folder = require_path(HIP_CPU, "AMD's HIP CPU runtime")
    text = "\n".join(path.read_text(errors="replace")
                     for part in ("include", "src") for path in sorted((folder / part).rglob("*"))
                     if path.is_file())
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)


def _unqualified(name: str) -> re.Pattern:
    return re.compile(rf"(?<![\w:.>]){re.escape(name)}\b")


def test_the_prelude_renders_and_includes_hip_cpu_first():
    text = _prelude()
    assert text.startswith("// Generated by rocmigrate")
    assert text.index("#include <hip/hip_runtime.h>") < text.index("inline ")
    assert "Not provided" in text and text.rstrip().endswith("#endif  // ROCMIGRATE_HIP_CPU_PRELUDE_H")


def test_the_list_of_defined_names_is_the_preludes():
    text = re.sub(r"namespace rocmigrate_hip_cpu \{.*?\}  // namespace rocmigrate_hip_cpu", "",
                  _prelude(), flags=re.DOTALL)
    functions = set(re.findall(r"^inline [\w:<> ]+?\*?\b(\w+)\(", text, re.MULTILINE))
    macros = set(re.findall(r"^#define (\w+)", text, re.MULTILINE))
    generated = {name for name in macros if name.startswith("ROCMIGRATE_HIP_CPU_")}
    found = functions | macros - generated - {"ROCMIGRATE_HIP_CPU_PRELUDE_H"}
    found |= set(re.findall(r"^enum (\w+)", text, re.MULTILINE))
    found |= set(re.findall(r"^using (\w+) =", text, re.MULTILINE))
    listed = set(DEFINED) | set(OVERLOADED) | set(WRAPPED)
    assert found - listed == set()
    written_out = (listed - set(_CONVERSIONS) - set(_DIRECTED) - set(_SAME_ATOMICS)
                   - set(_FLOAT_ATOMICS))
    assert written_out - found == set()
    for name in _SAME_ATOMICS + _FLOAT_ATOMICS:
        assert re.search(rf"^ROCMIGRATE_HIP_CPU_\w+\({name}, \w+\)$", text, re.MULTILINE), name
    for conversion in ("float, float, int, int", "double, double, ull, unsigned long long"):
        assert f"ROCMIGRATE_HIP_CPU_TO_INTEGER({conversion})" in text
    for conversion in ("int, int, float, float", "ull, unsigned long long, double, double",
                       "double, double, float, float"):
        assert f"ROCMIGRATE_HIP_CPU_DIRECTED({conversion})" in text


# HIP-CPU's functions the prelude replaces by a macro naming a wrapper: the wrapper's name, the
# return type HIP-CPU declares the function with, and whether the wrapper calls HIP-CPU's
# function and corrects its answer (True) or computes the answer itself (False).
WRAPPED = {"hipGetDeviceProperties": ("rocmigrate_hip_cpu::device_properties", "hipError_t", True),
           "hipCdivf": ("rocmigrate_hip_cpu::complex_divide", "hipFloatComplex", False),
           "atomicInc": ("rocmigrate_hip_cpu::atomic_inc", "unsigned int", False),
           "atomicDec": ("rocmigrate_hip_cpu::atomic_dec", "unsigned int", False)}
# Names HIP-CPU declares only inside its namespaces (hip::detail::half, hip::detail::half2), so
# the prelude's global aliases do not collide: the file that declares them, in namespace detail.
NAMESPACED = {"half": "src/include/hip/detail/half.hpp", "half2": "src/include/hip/detail/half.hpp"}


def test_hip_cpu_declares_none_of_the_names_the_prelude_defines():
    sources = _hip_cpu_sources()
    declared = [name for name in DEFINED
                if name not in NAMESPACED and _unqualified(name).search(sources)]
    attributes = [f"hipDeviceAttribute{name}" for name in ATTRIBUTES
                  if f"hipDeviceAttribute{name}" in sources]
    assert (declared, attributes) == ([], [])


def test_a_wrapped_function_is_hip_cpus_called_through_a_wrapper():
    sources, prelude = _hip_cpu_sources(), _prelude()
    for name, (wrapper, returned, calls_hip_cpu) in WRAPPED.items():
        # HIP-CPU declares it once, at global scope, with that return type
        declared = re.findall(rf"^(?:inline\s+)?([\w ]+?)\s+{name}\(", sources, re.MULTILINE)
        assert declared == [returned], name
        # the wrapper returns the same type, inside its namespace, and the macro follows it
        namespace, function = wrapper.split("::")
        start = prelude.index(f"\ninline {returned} {function}(")
        opened = prelude.rfind(f"\nnamespace {namespace} {{\n", 0, start)
        assert opened > prelude.rfind(f"\n}}  // namespace {namespace}\n", 0, start), name
        after = prelude[prelude.index(f"\n}}  // namespace {namespace}\n", start):]
        assert re.match(rf"\n}}  // namespace {namespace}\n\n(#define \w+ [\w:]+\n)*"
                        rf"#define {name} {wrapper}\n", after), name
        body = prelude[start:prelude.index("\n}\n", start)]
        assert (f"::{name}(" in body) == calls_hip_cpu, name


def test_hip_cpu_declares_the_aliased_names_in_its_namespaces_only():
    folder = require_path(HIP_CPU, "AMD's HIP CPU runtime")
    for name, declaring in NAMESPACED.items():
        text = (folder / declaring).read_text()
        declaration = text.index(f"using {name} = ")
        assert "namespace detail" in text[:declaration] and name in DEFINED
        assert not re.search(rf"^(using|typedef|struct|class) [\w ]*\b{name}\b", text,
                             re.MULTILINE)  # nothing at the start of a line: all indented


def test_hip_cpu_has_the_overloaded_names_for_other_parameters_only():
    sources, prelude = _hip_cpu_sources(), _prelude()
    for name, added in OVERLOADED.items():
        declared = [" ".join(parameters.split()) for parameters in re.findall(
            rf"(?<![\w:.>]){name}\(([^)]*)\)\s*noexcept", sources)]
        assert declared, name
        theirs = {parameters.rsplit(" ", 1)[0] for parameters in
                  (first.split(",")[0].strip() for first in declared)}
        ours = set(re.findall(rf"^inline [\w ]+ {name}\(([\w ]+\*?) \w+[,)]", prelude,
                              re.MULTILINE))
        assert (ours, ours & theirs) == (set(added), set()), name


def _enumerator_values(enum_body: str) -> dict[str, int]:
    """An enum's enumerators and their values, as the compiler numbers them."""
    values: dict[str, int] = {}
    value = -1
    for name, given in re.findall(r"(hipDeviceAttribute\w+)\s*(?:=\s*(\w+))?\s*,",
                                  re.sub(r"//[^\n]*", "", enum_body)):
        value = value + 1 if not given else int(given) if given.isdigit() else values[given]
        values[name] = value
    return values


def test_every_attribute_has_hips_value_and_an_answer():
    text = _prelude()
    start = text.index("enum hipDeviceAttribute_t {")
    prelude = _enumerator_values(text[start:text.index("};", start)])
    assert sorted(prelude) == sorted(f"hipDeviceAttribute{name}" for name in ATTRIBUTES)
    header = require_path(ROOT.parent / "shared" / "data" / "hip-6.4" / "include" / "hip" /
                          "hip_runtime_api.h", "HIP 6.4's headers").read_text()
    hip = _enumerator_values(header[header.index("typedef enum hipDeviceAttribute_t {"):
                                    header.index("} hipDeviceAttribute_t;")])
    assert {name: hip[name] for name in prelude} == prelude
    for name in prelude:
        assert f"case {name}:" in text


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _float(value: float) -> float:
    """The float nearest value."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


SCALARS: dict[str, float] = {
    "__float_as_int": 0x3F800000, "__int_as_float": _f32(0x40490FDB),
    "__float_as_uint": 0x80000000, "__uint_as_float": 1.0,
    "__double_as_longlong": 0x3FF0000000000000, "__hiloint2double": math.pi,
    "__double2hiint": 0x400921FB, "__double2loint": 0x54442D18,
    "__fdividef": 0.25, "__expf": 1.0, "__exp10f": 100.0, "__logf": 0.0, "__log10f": 3.0,
    "__sinf": 0.0, "__cosf": 1.0, "__tanf": 0.0, "__sincosf.sin": 0.0, "__sincosf.cos": 1.0,
    "__saturatef.above": 1.0, "__saturatef.below": 0.0, "__saturatef.nan": 0.0,
    "__fadd_rn.tie": 1.0, "__fadd_rn.up": 1 + 2**-23, "__fsub_rn": 1.0, "__fmul_rn": 1.5,
    "__fdiv_rn": 0x3EAAAAAB, "__frcp_rn": 0x3EAAAAAB, "__fsqrt_rn": 0x3FB504F3,
    "__frsqrt_rn": 0.5, "__fmaf_rn": -(2**-46),
    "__dadd_rn": 0.1 + 0.2, "__dsub_rn": 1 - 0.1, "__dmul_rn": 0.1 * 3, "__ddiv_rn": 1 / 3,
    "__drcp_rn": 1 / 3, "__dsqrt_rn": math.sqrt(2), "__fma_rn": -(2**-104),
    "rsqrtf": 0.5, "rsqrt": 0.25,
    "__float2int_rn.even": 2, "__float2int_rn.odd": 4, "__float2int_rn.huge": 2**31 - 1,
    "__float2int_rn.nan": 0, "__float2int_rz": -2, "__float2int_ru": 3, "__float2int_rd": -3,
    "__float2uint_rn.negative": 0, "__float2ll_rz.huge": -(2**63), "__float2ull_ru": 2,
    "__double2int_rd": -1, "__double2uint_ru": 1, "__double2ll_rn": -2,
    "__double2ull_rz.huge": -1,  # 2**64 - 1, printed as a long long
    "__int2float_rn": 2**24, "__uint2float_rn": 2**32, "__ll2float_rn": -(2**53),
    "__ull2float_rn": 2**64, "__int2double_rn": -3, "__uint2double_rn": 2**32 - 1,
    "__ll2double_rn": 2**53, "__ull2double_rn": 2**64, "__double2float_rn": 0x3DCCCCCD,
    "__int2float_rd": 2**24, "__int2float_ru": 2**24 + 2, "__int2float_rz": -(2**24),
    "__int2float_rd.negative": -(2**24 + 2), "__uint2float_ru": 2**32,
    "__uint2float_rz": 2**32 - 2**8, "__uint2float_rd": 2**24,
    "__ll2float_rd": 2**53, "__ll2float_ru": 2**53 + 2**30, "__ll2float_rz": -(2**53),
    "__ull2float_rz": 2**64 - 2**40, "__ull2float_ru": 2**64, "__ull2float_rd": 2**24,
    "__ll2double_rd": 2**53, "__ll2double_ru": 2**53 + 2, "__ll2double_rz": -(2**53),
    "__ull2double_rz": 2**64 - 2**11, "__ull2double_ru": 2**64, "__ull2double_rd": 2**53,
    "__double2float_rd": 0x3DCCCCCC, "__double2float_ru": 0x3DCCCCCD,
    "__double2float_rz": 0xBDCCCCCC, "__double2float_rd.huge": 0x7F7FFFFF,
    "__double2float_ru.huge": 0x7F800000, "__double2float_rz.exact": 0.5,
    "__align__": 16, "hipCreal": 1.0, "hipCimag": 2.0, "hipConj": -2.0, "hipCsqabs": 25.0,
    "hipCabs": 5.0, "hipCadd": 4 + 10 * 6, "hipCsub": -2 + 10 * -2, "hipCmul.real": -5.0,
    "hipCmul.imag": 10.0, "hipCdiv.real": (1 * 3 + 2 * 4) / 25, "hipCdiv.imag": (2 * 3 - 1 * 4) / 25,
    "hipCdivf.real": _float(11 / 25), "hipCdivf.imag": _float(2 / 25),
    "hipCfma.real": -4.5, "hipCfma.imag": 10.25, "hipCfmaf.real": -4.5, "hipCfmaf.imag": 10.25,
    "hipComplexDoubleToFloat": 0x3DCCCCCD, "hipComplexFloatToDouble": -1.5,
    "__ffsll.longlong": 33, "__ffsll.ulonglong": 0, "__clzll.longlong": 63,
    "__clzll.ulonglong": 64, "__umul24": 2, "__mulhi": -1, "__umulhi": 0xFFFFFFFE,
    "__mul64hi": -1, "__umul64hi": 2, "__brev": 0x80000000, "__brevll": -(2**63),
    "__byte_perm": 0x55114400, "__hadd": -2, "__rhadd": -1, "__uhadd": 0x80000000,
    "__urhadd": 0x80000000, "__sad": 9, "__usad": 9,
    "__hgt2": 1, "__hge2": 11, "__hgtu2": 10, "__hgeu2": 10,
    "min.int": -4, "max.int": 3, "min.unsigned": 7, "min.int_unsigned": 1,
    "max.unsigned_int": 2**32 - 1, "min.long": -5, "max.ulong_long": -1, "min.longlong": -5,
    "min.longlong_ulonglong": 3, "max.ulonglong": 9, "min.float": 1.5, "max.float.nan": 1.0,
    "max.double": 3.0, "min.float_double": 0.5, "max.double_float": 1.5,
    "min_max.using_namespace_std": 10.0, "pi_float": _f32(0x40490FDB),
    "signbit": 1, "isnan": 1, "isinf": 1, "isfinite": 1, "isnormal": 1,
    # limit 3: at (or above) it atomicInc wraps to 0, at 0 (or above it) atomicDec to the limit
    "atomicInc.old": 3, "atomicInc.below": 2, "atomicInc.limit": 0, "atomicInc.above": 0,
    "atomicDec.old": 0, "atomicDec.below": 1, "atomicDec.zero": 3, "atomicDec.above": 3,
}
BLOCKS, THREADS, WAVEFRONT = 2, 96, 64


def _value(text: str) -> float:
    return float.fromhex(text) if "p" in text else int(text)


def _expected_lanes(block: int, thread: int) -> list[int]:
    base = 1000 * block
    first_lane = thread // WAVEFRONT * WAVEFRONT
    lanes = min(WAVEFRONT, THREADS - first_lane)
    neighbour_after_first = base + ((first_lane + (thread - first_lane + 1) % lanes) ^ 1)
    last_lane = thread == first_lane + lanes - 1
    return [thread % WAVEFRONT, base + (thread ^ 1), 2 * neighbour_after_first,
            2 * (base + ((THREADS - 1 - thread) ^ 1)), THREADS // 3, 1, 0, 1, 0,
            thread ^ 1, thread - (thread != first_lane), -1 if last_lane else thread + 1,
            first_lane, -first_lane,
            thread, 0, 0, block, 0, 0, THREADS, 1, 1, BLOCKS, 1, 1]


@pytest.mark.slow
def test_the_prelude_computes_what_hip_computes_in_kernels_and_on_the_host(tmp_path: Path):
    prelude = tmp_path / "prelude.h"
    prelude.write_text(_prelude())
    program = build_for_hip_cpu(PROBE, tmp_path, extra=("-include", str(prelude)))
    lines = dict(line.split(" ", 1) for line in run_on_hip_cpu(program).splitlines())

    for side in ("host", "device"):
        values = {key.split(".", 1)[1]: _value(text) for key, text in lines.items()
                  if key.startswith(side + ".")}
        assert values == SCALARS, side

    for block in range(BLOCKS):
        for thread in range(THREADS):
            index = block * THREADS + thread
            assert ([int(word) for word in lines[f"lanes.{index}"].split()] ==
                    _expected_lanes(block, thread)), index

    threads = BLOCKS * THREADS
    assert [_value(word) for word in lines["atomics"].split()] == [
        threads - 1, 1000 - threads, threads, threads / 4, threads - 1, 0, threads,
        -100, -threads / 2, threads, threads - 1, 0, threads, threads, threads - 1, 2**64 - 1,
        threads % 10, -threads % 10, threads // 10]  # atomicInc and atomicDec modulo 10
    assert int(lines["managed"]) == 5 + threads
    # -0.0 < +0.0 for max and min, a NaN changes nothing, exchange and CAS return the old value
    assert [_value(word) for word in lines["atomics.signs"].split()] == [
        0, 0x80000000, 0x80000000, 1.0, 1, 1.5, 2.5, 1.0, 1.0, 1.0, 5.0]

    invalid_device, invalid_value = (int(word) for word in lines["errors"].split())
    assert invalid_device != invalid_value
    assert {key: int(lines[key]) for key in (
        "hipHostAlloc", "hipHostAlloc.void", "hipFreeHost", "hipFreeHost.typed",
        "hipMemcpyPeer", "hipMemcpyPeerAsync", "hipMemcpyPeer.other_device",
        "hipMemcpyPeerAsync.other_device", "hipDeviceGetAttribute.other_device",
        "hipDeviceGetAttribute.null", "hipDeviceGetAttribute.unknown")} == {
        "hipHostAlloc": 0, "hipHostAlloc.void": 0, "hipFreeHost": 0, "hipFreeHost.typed": 0,
        "hipMemcpyPeer": 0, "hipMemcpyPeerAsync": 0,
        "hipMemcpyPeer.other_device": invalid_device,
        "hipMemcpyPeerAsync.other_device": invalid_device,
        "hipDeviceGetAttribute.other_device": invalid_device,
        "hipDeviceGetAttribute.null": invalid_value,
        "hipDeviceGetAttribute.unknown": invalid_value}
    assert lines["peer_copied"] == "11 22 33 0" and float.fromhex(lines["pinned"]) == 2.5
    assert [int(word) for word in lines["kernel_configuration"].split()] == [
        0, 0, invalid_value, 0, 0, 0, 0, invalid_value]

    properties = [int(word) for word in lines["props"].split()]
    # through the wrapper: the wavefront kernels run with and the rate clock64() counts at
    assert (properties[32], properties[29]) == (WAVEFRONT, properties[2])
    clock_instruction_rate, shared_per_block, shared_per_multiprocessor = (
        properties[2], properties[30], properties[31])
    expected = [*properties[:29], clock_instruction_rate, shared_per_block,
                shared_per_multiprocessor, shared_per_multiprocessor, WAVEFRONT]
    answers = [answer.split(":") for answer in lines["attributes"].split()]
    assert [int(status) for status, _ in answers] == [0] * len(ATTRIBUTES)
    assert dict(zip(ATTRIBUTES, (int(value) for _, value in answers))) == dict(
        zip(ATTRIBUTES, expected))
    assert properties[2] == 1_000_000  # clock64() counts nanoseconds: ClockRate is 1 GHz in kHz

    diverged = subprocess.run([str(program), "diverged"], capture_output=True, text=True,
                              timeout=60, check=False)
    assert diverged.returncode != 0 and "diverged kernel finished" not in diverged.stdout
    assert ("cannot run here: lane 32 of a wavefront did not reach (or had returned before) "
            "__builtin_amdgcn_wave_barrier") in diverged.stderr
