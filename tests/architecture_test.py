"""The architecture's rules (docs/architecture.md), checked on the sources:
no source file over 400 lines, the algorithm ids named only in the table, and
each part of src/ including only the internal parts it may."""
import os
import re
import unittest

ROOT = os.environ.get("DPSOSP_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CODE = (".cpp", ".hpp", ".py")
FOLDERS = ("include", "src", "apps", "python", "tests", "bench", "experiments", "fuzz")
# The internal parts (src/<part>/) each part may include, besides its own and
# the public headers (include/dpsosp/).
MAY_INCLUDE = {
    "data": set(),
    "engine": {"data"},
    "random": {"engine"},
    "models": {"engine"},
    "privacy": set(),
    "mechanisms": set(),
    "optimizers": {"engine", "data"},
    "certify": set(),
    "audit": {"optimizers"},
}
INCLUDE = re.compile(r'#include "([a-z_]+)/')


def sources(folders=FOLDERS):
    for folder in folders:
        for base, dirs, files in os.walk(os.path.join(ROOT, folder)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build", "__pycache__")) and d != "out"]
            for name in files:
                if name.endswith(CODE):
                    yield os.path.join(base, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Architecture(unittest.TestCase):
    def test_no_source_file_over_400_lines(self):
        long = {os.path.relpath(p, ROOT): read(p).count("\n") for p in sources()}
        self.assertEqual({p: n for p, n in long.items() if n > 400}, {})

    def test_algorithm_ids_are_named_only_in_the_table(self):
        hits = [os.path.relpath(p, ROOT) for p in sources(("src", "apps", "python")) if "Algorithm::k" in read(p)]
        self.assertEqual(hits, ["src/optimizers/registry.cpp"])

    def test_parts_include_only_what_they_may(self):
        parts = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
        self.assertEqual(parts, sorted(MAY_INCLUDE), "a part of src/ the rules do not name")
        for part in parts:
            for path in sources((os.path.join("src", part),)):
                for used in INCLUDE.findall(read(path)):
                    if used in ("dpsosp", part):
                        continue
                    self.assertIn(used, MAY_INCLUDE[part], "%s includes %s/" % (os.path.relpath(path, ROOT), used))
        for path in sources(("apps", "python")):
            for used in INCLUDE.findall(read(path)):
                self.assertEqual(used, "dpsosp", "%s includes an internal header" % os.path.relpath(path, ROOT))


if __name__ == "__main__":
    unittest.main()
