"""The tools the commands run, and what they say: one owner for each fact, asked by every command
(build, validate, harness, and the workspace settling ``--rocm auto``).

``compilers``: where hipcc is (``find_hipcc``: PATH, ``$ROCM_PATH``, ``$HIP_PATH``, ``/opt/rocm``)
and nvcc (``find_nvcc``: PATH, ``$CUDA_HOME``, ``$CUDA_PATH``, ``/usr/local/cuda``), what a
compiler says its version is (``compiler_version``), the installed HIP's release
(``installed_hip``), its ROCm root (``rocm_root``) and HIP's AMD environment (``amd_env``).
``process``: running a program within a time limit and bounded output, leaving no process behind
(``run_process``). ``devices``: the GPUs present, and whether a side can run here
(``gpu_check``). ``sides``: how `validate` and `harness` build each side (``cuda_toolchain``,
``hip_toolchain``: hipcc for AMD, hipcc on NVIDIA, or nvcc through rocmigrate's NVIDIA headers)
and one compile within the time limit (``compile_binary`` -> ``Build``). ``timing``: whether a
port is slower than its original from the times of each side (``judge_timing``;
``runs_needed``: the fewest runs for an interval).
"""
