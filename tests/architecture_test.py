"""The architecture's rules (docs/architecture.md), checked on the sources:
no source file over 400 lines, the algorithm ids named only in the table, and
each part of src/ (with its public headers) including only the parts it may,
which form no cycle."""
import os
import re
import unittest

ROOT = os.environ.get("DPSOSP_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CODE = (".cpp", ".hpp", ".py")
FOLDERS = ("include", "src", "apps", "python", "tests", "bench", "experiments", "fuzz")
# The internal parts (src/<part>/) each part may include, besides its own;
# a public header (include/dpsosp/) counts as the part that implements it
# (HEADER_PART), so a part includes no public header of a part it may not
# include either. The graph is acyclic (checked below): no part includes one
# above it, through its sources or its public headers.
MAY_INCLUDE = {
    "data": {"random"},
    "random": set(),
    "engine": {"data"},
    "models": {"data", "engine"},
    "privacy": set(),
    "mechanisms": {"privacy", "random"},
    "optimizers": {"data", "engine", "mechanisms", "models", "privacy", "random"},
    "certify": {"data", "models"},
    "audit": {"mechanisms", "models", "optimizers", "privacy", "random"},
    "report": {"audit", "certify", "data", "engine", "mechanisms", "models", "optimizers", "privacy", "random"},
}
# Each public header's part (None: below every part). A new header is added here.
HEADER_PART = {
    "types": None, "error": None, "dpsosp": None,
    "data": "data", "data_layout": "data", "record_file": "data", "synthetic": "data", "text": "data",
    "noise": "random", "discrete_gaussian": "random",
    "clip": "engine",
    "model": "models", "gradient_check": "models", "caller_model": "models",
    "privacy": "privacy", "pld": "privacy", "target": "privacy",
    "tree": "mechanisms", "mechanism": "mechanisms", "factorization": "mechanisms",
    "oracles": "optimizers", "scaling": "optimizers", "clip_estimate": "optimizers", "params": "optimizers",
    "optimizer": "optimizers", "algorithm": "optimizers", "options": "optimizers", "process_group": "optimizers",
    "certify": "certify", "audit": "audit", "report": "report", "privacy_figures": "report", "budget": "report",
}
INCLUDE = re.compile(r'#include "([a-z_]+)/')
PUBLIC = re.compile(r'#include "dpsosp/([a-z_]+)\.hpp"')


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

    def test_the_build_lists_every_library_source(self):
        listed = set(re.findall(r"\bsrc/[a-z_]+/[a-z_0-9]+\.cpp\b", read(os.path.join(ROOT, "CMakeLists.txt"))))
        on_disk = {os.path.relpath(p, ROOT) for p in sources(("src",)) if p.endswith(".cpp")}
        self.assertEqual(listed, on_disk, "CMakeLists.txt's DPSOSP_SOURCES and src/ differ")

    def test_the_docs_index_lists_every_page(self):
        index = read(os.path.join(ROOT, "docs", "index.md"))
        pages = sorted(n for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md") and n != "index.md")
        self.assertEqual([p for p in pages if "(%s)" % p not in index], [], "pages docs/index.md does not link")

    def test_algorithm_ids_are_named_only_in_the_table(self):
        hits = [os.path.relpath(p, ROOT) for p in sources(("src", "apps", "python")) if "Algorithm::k" in read(p)]
        self.assertEqual(hits, ["src/optimizers/registry.cpp"])

    def test_parts_include_only_what_they_may(self):
        parts = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
        self.assertEqual(parts, sorted(MAY_INCLUDE), "a part of src/ the rules do not name")
        headers = sorted(n[:-4] for n in os.listdir(os.path.join(ROOT, "include", "dpsosp")) if n.endswith(".hpp"))
        self.assertEqual(headers, sorted(HEADER_PART), "a public header without a part (HEADER_PART)")
        files = [(part, p) for part in parts for p in sources((os.path.join("src", part),))]
        files += [(HEADER_PART[h], os.path.join(ROOT, "include", "dpsosp", h + ".hpp")) for h in headers]
        for part, path in files:
            if part is None:
                continue
            text = read(path)
            used = {u for u in INCLUDE.findall(text) if u != "dpsosp"}
            used |= {HEADER_PART[h] for h in PUBLIC.findall(text) if h != "dpsosp"}
            for other in used - {None, part}:
                self.assertIn(other, MAY_INCLUDE[part], "%s (%s) includes %s" % (os.path.relpath(path, ROOT), part, other))
        for path in sources(("apps", "python")):
            for used in INCLUDE.findall(read(path)):
                self.assertEqual(used, "dpsosp", "%s includes an internal header" % os.path.relpath(path, ROOT))

    def test_the_parts_form_no_cycle(self):
        done, active = set(), []

        def visit(part):
            self.assertNotIn(part, active, "a cycle of parts: " + " -> ".join(active + [part]))
            if part in done:
                return
            active.append(part)
            for other in sorted(MAY_INCLUDE[part]):
                visit(other)
            active.pop()
            done.add(part)

        for part in sorted(MAY_INCLUDE):
            visit(part)

if __name__ == "__main__":
    unittest.main()
