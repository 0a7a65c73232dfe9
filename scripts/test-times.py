#!/usr/bin/python3
"""Where the build and test time goes: docs/test-times.md from the files the
scripts leave in their build directories.

    /usr/bin/python3 scripts/test-times.py [BUILD_DIR ...] > docs/test-times.md

Each BUILD_DIR (default: build build-asan, those that exist) may hold
  build-steps.tsv   one line per compile or link: wall s, CPU s, output
                    (scripts/time-step.sh, the launcher scripts/build.sh and
                    scripts/sanitize.sh set)
  ctest-junit.xml   ctest --output-junit: each test's time and status
  test-run.txt      scripts/test.sh / sanitize.sh: date, cores, load average,
                    the build's and the tests' wall time
and the test labels come from `ctest --show-only=json-v1` run there.
"""
import collections
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

TOP = 15


def read_run(d):
    info = {}
    path = os.path.join(d, "test-run.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, _, value = line.rstrip("\n").partition(" ")
                info[key] = value
    return info


def labels_of(d):
    try:
        out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=d, capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    labels = {}
    for t in json.loads(out).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels[t["name"]] = props.get("LABELS", [])
    return labels


def read_tests(d):
    path = os.path.join(d, "ctest-junit.xml")
    if not os.path.exists(path):
        return []
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status", "run")
        if case.find("failure") is not None:
            status = "failed"
        elif case.find("skipped") is not None or status == "notrun":
            status = "not run"
        else:
            status = "passed"
        tests.append((case.get("name"), float(case.get("time", 0)), status))
    return tests


def read_steps(d):
    path = os.path.join(d, "build-steps.tsv")
    steps = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split(None, 2)
                if len(parts) == 3:
                    steps.append((float(parts[0]), float(parts[1]), parts[2].strip()))
    return steps


def short(output):
    # CMakeFiles/dpsosp_tests.dir/audit_test.cpp.o -> dpsosp_tests: audit_test.cpp
    if "CMakeFiles/" in output and ".dir/" in output:
        target, _, rest = output.split("CMakeFiles/", 1)[1].partition(".dir/")
        return "%s: %s" % (target, rest[:-2] if rest.endswith(".o") else rest)
    return "link " + os.path.basename(output)


def section(d):
    info, tests, steps = read_run(d), read_tests(d), read_steps(d)
    if not tests and not steps:
        return []
    out = ["## `%s/`%s" % (d, " (AddressSanitizer + UBSan)" if "asan" in d else " (Release)"), ""]
    if info:
        out.append("Measured %s on %s cores; load average (1, 5, 15 min) %s when the tests started, %s when they "
                   "ended. Build %s s, tests %s s (wall), selection `%s`." %
                   (info.get("date", "?"), info.get("cores", "?"), info.get("load_before", "?"),
                    info.get("load_after", "?"), info.get("build_s", "?"), info.get("ctest_s", "?"),
                    info.get("selection", "?").strip()))
        out.append("")
    if tests:
        labels = labels_of(d)
        total = sum(t for _, t, _ in tests)
        out += ["%d tests, %.0f s of test time in all (the sum; ctest -j runs them side by side)." %
                (len(tests), total), "", "| slowest tests | labels | s | |", "|---|---|---:|---|"]
        for name, t, status in sorted(tests, key=lambda x: -x[1])[:TOP]:
            out.append("| %s | %s | %.1f | %s |" % (name, " ".join(labels.get(name, [])), t,
                                                    "" if status == "passed" else status))
        by_label = collections.defaultdict(lambda: [0, 0.0])
        for name, t, _ in tests:
            for label in labels.get(name, ["(none)"]):
                by_label[label][0] += 1
                by_label[label][1] += t
        out += ["", "| label | tests | s (sum) |", "|---|---:|---:|"]
        for label, (count, t) in sorted(by_label.items(), key=lambda x: -x[1][1]):
            out.append("| %s | %d | %.1f |" % (label, count, t))
        out.append("")
    if steps:
        cpu = sum(c for _, c, _ in steps)
        out += ["%d build steps, %.0f s of CPU in all (user + sys; about half of it in wall time on 2 free cores)." %
                (len(steps), cpu), "", "| slowest build steps | CPU s | wall s |", "|---|---:|---:|"]
        for wall, c, output in sorted(steps, key=lambda x: -x[1])[:TOP]:
            out.append("| %s | %.1f | %.1f |" % (short(output), c, wall))
        by_target = collections.defaultdict(float)
        for _, c, output in steps:
            by_target[short(output).split(":")[0].replace("link ", "(links) ")] += c
        out += ["", "| target | CPU s |", "|---|---:|"]
        for target, c in sorted(by_target.items(), key=lambda x: -x[1]):
            out.append("| %s | %.1f |" % (target, c))
        out.append("")
    return out


def main(argv):
    dirs = argv[1:] or [d for d in ("build", "build-asan") if os.path.isdir(d)]
    out = ["# Where the test time goes", "",
           "Generated by `/usr/bin/python3 scripts/test-times.py %s > docs/test-times.md` from the timings "
           "`scripts/test.sh` and `scripts/sanitize.sh` leave in their build directories (regenerate: "
           "`bash scripts/test.sh --all && bash scripts/sanitize.sh`, then that command)." % " ".join(dirs), ""]
    for d in dirs:
        out += section(d)
    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main(sys.argv)
