"""Scripts run by hand (`python3 tools/NAME.py`, most of them on an NVIDIA
machine); a package so that tests and benchmarks import what they share
(`from tools import run_programs_passthrough`)."""
