"""Builds dpsosp._core with the project's CMake (pyproject.toml has the metadata).

pip install configures a module-only build (DPSOSP_MODULE_ONLY, cmake/module_only.cmake: the library sources the
module links, in unity batches, the hot kernels compiled as in any build) in a temporary directory outside the
source tree, builds the target _core, copies it into the wheel and removes the directory with setuptools' own
build and egg-info directories: nothing is written under the source folder. Each stage prints one line
"dpsosp: ..." (pip shows them with -v; the tools' full output only when a stage fails).
DPSOSP_CMAKE_BUILD_DIR=DIR builds _core in an existing, configured build directory instead (its objects are
reused; nothing is reconfigured or removed).
"""
import atexit
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# A venv made by another python3 than Debian's has neither Debian's numpy nor setuptools' bdist_wheel (the
# wheel package): say so in one line, before pip's own, longer errors. numpy is needed at run time only, so an
# isolated build (pip's own environment, from PyPI; not this project's way) is not asked for it.
_isolated = any("pip-build-env-" in path for path in sys.path)
_missing = [name for name in ("numpy", "wheel") if not (_isolated and name == "numpy")
            and importlib.util.find_spec(name) is None]
if _missing:
    sys.exit(f"dpsosp: {sys.executable} lacks {' and '.join(_missing)}: make the venv with Debian's python, "
             "/usr/bin/python3 -m venv --system-site-packages .venv (python3-numpy, python3-wheel)")

from setuptools import Extension, setup  # noqa: E402 (after the check, which needs no setuptools)
from setuptools.command.build_ext import build_ext  # noqa: E402

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' build and egg-info directories and the CMake build: one temporary directory, removed on exit.
WORK = tempfile.mkdtemp(prefix="dpsosp-pip-")
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


def say(line):
    print(f"dpsosp: {line}", file=sys.stderr, flush=True)


def run_quietly(command, stage, on_line=None):
    """Runs command, keeping its output; on failure prints the output and names the stage."""
    output = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            output.append(line)
            if on_line:
                on_line(line)
    if process.returncode != 0:
        sys.stderr.write("".join(output))
        raise RuntimeError(f"dpsosp: {stage} failed (exit {process.returncode}): {' '.join(command)}")


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        start = time.monotonic()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        build_dir = os.environ.get("DPSOSP_CMAKE_BUILD_DIR")
        if build_dir:
            build_dir = os.path.abspath(build_dir)
            say(f"configure: reusing {build_dir} (DPSOSP_CMAKE_BUILD_DIR)")
        else:
            build_dir = os.path.join(WORK, "cmake")
            command = ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DDPSOSP_MODULE_ONLY=ON",
                       "-DDPSOSP_BUILD_TESTS=OFF", "-DDPSOSP_BUILD_APPS=OFF", "-DDPSOSP_INSTALL=OFF",
                       "-DDPSOSP_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
            # Ninja compiles the module's sources beside the library's (make waits for the library); the
            # environment's CMAKE_GENERATOR, when set, chooses instead.
            if shutil.which("ninja") and not os.environ.get("CMAKE_GENERATOR"):
                command += ["-G", "Ninja"]
            if shutil.which("ccache"):
                command += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            say(f"configure: cmake, module only, in {build_dir} (removed afterwards)")
            run_quietly(command, "configure")
            say(f"configure: done in {time.monotonic() - start:.0f} s")
        compile_start = time.monotonic()
        shown = [-1]

        def progress(line):
            # Ninja's "[done/total] ...", make's "[ 45%] ...": a line at each tenth of the way.
            steps = re.match(r"\[(\d+)/(\d+)\]", line)
            percent = re.match(r"\[\s*(\d+)%\]", line)
            if steps:
                done, total = int(steps.group(1)), int(steps.group(2))
                if done == 0:  # ninja's re-check of globbed directories, before the build's own count
                    return
                tenth, figure = done * 10 // max(total, 1), f"{done}/{total} steps"
            elif percent:
                tenth, figure = int(percent.group(1)) // 10, f"{percent.group(1)}%"
            else:
                return
            if tenth > shown[0]:
                shown[0] = tenth
                say(f"compile: {figure}, {time.monotonic() - compile_start:.0f} s")

        say(f"compile: the library and the module with {jobs} jobs")
        run_quietly(["cmake", "--build", build_dir, "--target", "_core", "-j", jobs], "compile", progress)
        say(f"compile: done in {time.monotonic() - compile_start:.0f} s")
        package = os.path.join(build_dir, "python", "dpsosp")
        built = [f for f in os.listdir(package) if f.startswith("_core") and f.endswith(".so")]
        if len(built) != 1:
            raise RuntimeError(f"dpsosp: expected one _core extension in {package}, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(package, built[0]), target)
        say(f"copy: {built[0]} into the wheel")
        say(f"done: _core built in {time.monotonic() - start:.0f} s")


setup(ext_modules=[CMakeExtension("dpsosp._core")], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": os.path.join(WORK, "setuptools")}, "egg_info": {"egg_base": WORK}})
