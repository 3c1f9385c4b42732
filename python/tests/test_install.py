"""The package installs offline into a fresh venv (Debian's pip/venv/setuptools, no build isolation, no
index) and imports from another directory. ctest passes LOGRATIO_PREBUILT_MODULE (the CMake build's
module) so that nothing compiles here; without it setup.py runs the CMake build (LOGRATIO_PREBUILT_DISPATCH
and LOGRATIO_BUILD_JOBS shorten it)."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PYTHON_DIR = Path(__file__).resolve().parent.parent


def test_pip_install_into_fresh_venv():
    with tempfile.TemporaryDirectory(prefix="logratio-venv-") as tmp:
        tmp = Path(tmp)
        venv = tmp / "V"
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
        env = dict(os.environ, LOGRATIO_BUILD_BASE=str(tmp / "build"), PIP_NO_INDEX="1",
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        env.pop("PYTHONPATH", None)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-build-isolation", str(PYTHON_DIR)],
                       check=True, env=env)
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir()
        code = ("import logratio, numpy as np, pydoc\n"
                "r = -np.abs(np.random.default_rng(0).standard_normal((4, 9))).astype(np.float32)\n"
                "p = logratio.panel(r * 1.01, r, np.ones((4, 9), bool))\n"
                "doc = pydoc.render_doc(logratio.panel)\n"
                "assert all(a in doc for a in ('train:', 'rollout:', 'mask:', 'cu_seqlens:', 'quantiles:',"
                " 'threads:', 'nonfinite:'))\n"
                "print(logratio.__file__, logratio.simd_level(), p['tokens'])\n")
        out = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=elsewhere, env=env,
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        where, level, tokens = out.stdout.split()
        assert where.startswith(str(venv)), where
        assert tokens == "36" and level in ("avx512", "avx2", "sse2")
