"""The embedded LLM's native libraries run on any x86-64 CPU from AVX2 up.

pip's default build of llama-cpp-python compiles with ``-march=native``: on a build machine whose CPU
advertises AMX or AVX-512 the library then uses those instructions, and crashes (a general protection
fault in ``ldtilecfg``) on another CPU, or on a virtualised one whose tile state is unusable. ``.ci/llama-build``
compiles with portable flags; these tests disassemble what is installed, so a native build that slipped
back in through a wheel cache fails here.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# AMX tile instructions (any of them needs the tile state the faulting CPU lacked).
AMX = re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd|tileloaddt1|tilestored|tilerelease|tilezero|tdpb[su][su]d|tdpbf16ps|tdpfp16ps)\b")
# AVX-512: 512-bit registers or opmask registers in an operand.
AVX512 = re.compile(r"%zmm\d|%k[1-7]\b")


def _libraries() -> list[Path]:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        if os.environ.get("CI"):
            pytest.fail("llama-cpp-python is not installed; .ci/setup installs it")
        pytest.skip("needs pip install -e '.[embedded]'")
    found = sorted({path.resolve() for path in Path(spec.origin).parent.glob("lib/*.so*")})  # links name one file thrice
    assert found, f"no native libraries next to {spec.origin}"
    return found


def _disassembly(library: Path) -> str:
    if shutil.which("objdump") is None:
        pytest.skip("objdump (binutils) is not installed")
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True, check=True).stdout


def test_the_patterns_recognise_the_instructions_they_look_for():
    assert AMX.search("  4011a0:\tldtilecfg (%rax)") and AMX.search("\ttdpbssd %tmm2,%tmm1,%tmm0")
    assert AVX512.search("\tvmovups %zmm0,(%rdi)") and AVX512.search("\tvaddps %ymm1,%ymm2,%ymm3{%k1}")
    assert not AVX512.search("\tvfmadd231ps %ymm1,%ymm2,%ymm3") and not AMX.search("\tvpdpbusd %ymm1,%ymm2,%ymm3")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the portable flags are x86-64 flags")
def test_installed_llama_libraries_use_no_amx_and_no_avx512():
    libraries = _libraries()
    cpu = [lib for lib in libraries if "ggml-cpu" in lib.name]
    assert cpu, f"libggml-cpu is missing among {[lib.name for lib in libraries]}"
    offending = {}
    for library in libraries:
        text = _disassembly(library)
        hits = [line.strip() for line in text.splitlines() if AMX.search(line) or AVX512.search(line)]
        if hits:
            offending[library.name] = hits[:3]
    assert not offending, f"native instructions beyond AVX2 in the embedded LLM (rebuild with bash .ci/llama-build): {offending}"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the portable flags are x86-64 flags")
def test_installed_llama_libraries_use_avx2():
    """The portable build is not a slow generic one: AVX2 (ymm) code is there."""
    cpu = [lib for lib in _libraries() if "ggml-cpu" in lib.name]
    assert "%ymm" in _disassembly(cpu[0])
