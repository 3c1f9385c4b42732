"""Builds logratio._logratio with the repository's CMake project (see pyproject.toml)."""
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures ROOT with only the Python module enabled and builds target logratio_python."""

    def build_extension(self, ext):
        out = Path(self.get_ext_fullpath(ext.name)).resolve()
        out.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("LOGRATIO_PREBUILT_MODULE")
        if prebuilt:  # the module of a CMake build of this checkout (ctest's fast path)
            shutil.copy2(prebuilt, out)
            return
        if not (ROOT / "CMakeLists.txt").exists() or not (ROOT / "src" / "dispatch").is_dir():
            sys.exit("logratio: setup.py builds from the repository checkout (python/ next to src/ and include/)")
        build = Path(self.build_temp).resolve() / "cmake"
        args = [f"-S{ROOT}", f"-B{build}", "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={sys.executable}",
                "-DLOGRATIO_BUILD_TESTS=OFF", "-DLOGRATIO_BUILD_TOOLS=OFF", "-DLOGRATIO_BUILD_EXAMPLES=OFF",
                "-DLOGRATIO_INSTALL=OFF", "-DLOGRATIO_BUILD_PYTHON=ON", "-DLOGRATIO_BUILD_DISPATCH=ON"]
        if os.environ.get("LOGRATIO_PREBUILT_DISPATCH"):
            args.append(f"-DLOGRATIO_PREBUILT_DISPATCH={os.environ['LOGRATIO_PREBUILT_DISPATCH']}")
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        subprocess.run(["cmake", *args], check=True)
        jobs = os.environ.get("LOGRATIO_BUILD_JOBS", "1")
        subprocess.run(["cmake", "--build", str(build), "-t", "logratio_python", "-j", jobs], check=True)
        built = glob.glob(str(build / "python" / "logratio" / "_logratio*.so"))
        if len(built) != 1:
            sys.exit(f"logratio: expected one built module, found {built}")
        shutil.copy2(built[0], out)


options = {}
if os.environ.get("LOGRATIO_BUILD_BASE"):
    options = {"build": {"build_base": os.environ["LOGRATIO_BUILD_BASE"]},
               "egg_info": {"egg_base": os.environ["LOGRATIO_BUILD_BASE"]}}

setup(ext_modules=[CMakeExtension("logratio._logratio")], cmdclass={"build_ext": CMakeBuild}, options=options)
