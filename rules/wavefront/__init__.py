"""Wavefront rules: AMD wavefronts are 64 lanes; CUDA code assumes 32-lane warps."""
