"""Builds dpsosp._core with the project's CMake (pyproject.toml has the metadata).

The extension is the CMake target _core: the C++ library and the pybind11 module, compiled with the flags
CMakeLists.txt gives them (per-file ones included). By default a private build directory under build/pip is
configured without tests or the CLI; DPSOSP_CMAKE_BUILD_DIR=DIR builds the target in an existing, configured
build directory instead (already compiled objects are reused; nothing is reconfigured).
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        jobs = str(os.cpu_count() or 1)
        build_dir = os.environ.get("DPSOSP_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
        else:
            build_dir = os.path.join(ROOT, "build", "pip", "cmake")
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                                   "-DDPSOSP_BUILD_TESTS=OFF", "-DDPSOSP_BUILD_APPS=OFF", "-DDPSOSP_INSTALL=OFF",
                                   "-DDPSOSP_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_core", "-j", jobs])
        package = os.path.join(build_dir, "python", "dpsosp")
        built = [f for f in os.listdir(package) if f.startswith("_core") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"expected one _core extension in {package}, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(package, built[0]), target)


setup(ext_modules=[CMakeExtension("dpsosp._core")], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join("build", "pip", "setuptools")}})
