"""Builds the Python package antler with CMake for `pip install .` (see pyproject.toml).

The extension and libantler are built by the project's own CMake (tests, benchmarks and examples
off) and installed, self-contained, into the package: _antler finds libantler next to itself
($ORIGIN), so the package works from any site-packages without LD_LIBRARY_PATH."""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def run(self):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        stage = pathlib.Path(self.build_temp).resolve() / "stage"
        shutil.rmtree(stage, ignore_errors=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                        "-DANTLER_BUILD_TESTS=OFF", "-DANTLER_BUILD_BENCH=OFF",
                        "-DANTLER_BUILD_EXAMPLES=OFF", "-DANTLER_PYTHON_WHEEL=ON",
                        "-DANTLER_PYTHON_INSTALL_DIR=.", "-DPython_EXECUTABLE=" + sys.executable,
                        "-DCMAKE_INSTALL_PREFIX=" + str(stage)], check=True)
        subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", "_antler"],
                       check=True)
        subprocess.run(["cmake", "--install", str(build), "--component", "python"], check=True)
        out = pathlib.Path(self.build_lib) / "antler"
        out.mkdir(parents=True, exist_ok=True)
        for f in (stage / "antler").iterdir():
            if not f.name.endswith(".py"):  # the .py files come from build_py
                shutil.copy2(f, out / f.name, follow_symlinks=True)


setup(
    packages=["antler"],
    package_dir={"antler": "python/antler"},
    ext_modules=[Extension("antler._antler", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
