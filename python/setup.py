"""Builds unirecord's Python extension by driving CMake on python/CMakeLists.txt,
which builds the C++ library from the repository root (..) and links it in.

    pip install ./python                                  # online, isolated build
    pip install --no-build-isolation --no-index ./python  # offline (Debian's setuptools + pybind11-dev)

Environment: CMAKE_BUILD_PARALLEL_LEVEL (jobs, default: all cores),
UNIRECORD_CMAKE_ARGS (extra CMake arguments), UNIRECORD_BUILD_TYPE (default Release),
UNIRECORD_PREBUILT_CORE (the path of a _core module built already, by the root
build with -DUNIRECORD_BUILD_PYTHON=ON: the wheel takes it instead of compiling;
scripts/test-python.sh uses it).
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        prebuilt = os.environ.get("UNIRECORD_PREBUILT_CORE")
        if prebuilt:
            target = Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(prebuilt, target)
            return
        out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        args = [
            f"-DCMAKE_BUILD_TYPE={os.environ.get('UNIRECORD_BUILD_TYPE', 'Release')}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DUNIRECORD_PY_OUTPUT_DIR={out_dir}",
        ]
        try:  # the pybind11 wheel of an isolated build; Debian's pybind11-dev needs nothing
            import pybind11

            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        args += shlex.split(os.environ.get("UNIRECORD_CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", str(HERE), "-B", str(build_dir), *args], check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_core", "-j", jobs], check=True)


setup(
    name="unirecord",
    version="0.1.0",
    description="Record files for deep-learning training: zero-copy datasets, crop-before-decode JPEG, native loader",
    packages=["unirecord"],
    package_data={"unirecord": ["py.typed", "*.pyi"]},
    ext_modules=[CMakeExtension("unirecord._core")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    install_requires=["numpy"],
    extras_require={"torch": ["torch>=1.13"]},
    zip_safe=False,
)
