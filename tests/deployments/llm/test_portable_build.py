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
# AVX-512 (EVEX): 512-bit registers, opmask registers, the upper 16 vector registers, or EVEX-only instructions
# that -march=native emits on xmm/ymm too; and AVX-VNNI ({vex} vpdpbusd), which the flags also leave out.
BEYOND_AVX2 = re.compile(
    r"%zmm\d|%k[0-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b|\bvpternlog|\bvperm[it]2|\bvpdp(bu|ws)sds?\b|\bvpmadd52|\bvpopcnt[bwdq]\b"
)


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
        if os.environ.get("CI"):
            pytest.fail("objdump (binutils) is not installed; the shipped library cannot be checked")
        pytest.skip("objdump (binutils) is not installed")
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True, check=True).stdout


def test_the_patterns_recognise_the_instructions_they_look_for():
    assert AMX.search("  4011a0:\tldtilecfg (%rax)") and AMX.search("\ttdpbssd %tmm2,%tmm1,%tmm0")
    assert BEYOND_AVX2.search("\tvmovups %zmm0,(%rdi)") and BEYOND_AVX2.search("\tvaddps %ymm1,%ymm2,%ymm3{%k1}")
    assert BEYOND_AVX2.search("\t{vex} vpdpbusd %ymm1,%ymm2,%ymm3") and BEYOND_AVX2.search("\tvmovdqu64 %ymm17,(%rax)")
    assert BEYOND_AVX2.search("\tvpternlogd $0xff,%ymm0,%ymm0,%ymm0")
    assert not BEYOND_AVX2.search("\tvfmadd231ps %ymm1,%ymm2,%ymm3") and not BEYOND_AVX2.search("\tvpmaddubsw %ymm15,%ymm2,%ymm3")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the portable flags are x86-64 flags")
def test_installed_llama_libraries_use_nothing_beyond_avx2():
    libraries = _libraries()
    cpu = [lib for lib in libraries if "ggml-cpu" in lib.name]
    assert cpu, f"libggml-cpu is missing among {[lib.name for lib in libraries]}"
    offending = {}
    for library in libraries:
        text = _disassembly(library)
        hits = [line.strip() for line in text.splitlines() if AMX.search(line) or BEYOND_AVX2.search(line)]
        if hits:
            offending[library.name] = hits[:3]
    assert not offending, f"instructions beyond AVX2 (AMX, AVX-512, AVX-VNNI) in the embedded LLM (rebuild with bash .ci/llama-build): {offending}"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the portable flags are x86-64 flags")
def test_installed_llama_libraries_use_avx2():
    """The portable build is not a slow generic one: AVX2 (ymm) code is there."""
    cpu = [lib for lib in _libraries() if "ggml-cpu" in lib.name]
    assert "%ymm" in _disassembly(cpu[0])
