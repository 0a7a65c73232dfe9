"""Data-parallel runs under MPI (docs/scaling.md): `mpirun -n P dpsosp run`
gives the x bits of `dpsosp run` for P = 1, 2, 4 (oversubscribed on small
machines), loaded and streamed, dense and sparse; a rank with other records
ends the job with one line; killing a rank ends it within seconds and writes
no report. Run by ctest (test `mpi`) in builds with DPSOSP_MPI=ON."""
import json
import os
import random
import signal
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("DPSOSP_BIN", "build/dpsosp")
KEY_FILE = os.path.join(os.environ.get("DPSOSP_TEST_DATA", "tests/data"), "noise.key")
# The algorithms whose bits are checked: one place, add new ones here.
ALGORITHMS = ["spider-mf-adaptive", "spider-tree-adaptive", "dpsgd"]
PROCESSES = [1, 2, 4]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpirun(p, *args, timeout=120):
    return subprocess.run(["mpirun", "--oversubscribe", "-n", str(p), BIN, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=ENV)


def dpsosp(*args):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120)


def write_libsvm(path, n=8000, p=50, seed=2):
    rnd = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            cols = sorted(rnd.sample(range(1, p + 1), 6))
            vals = [rnd.gauss(0, 1) for _ in cols]
            f.write("%d %s\n" % (int(vals[0] > 0), " ".join("%d:%.17g" % (c, v) for c, v in zip(cols, vals))))


class Mpi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.svm = os.path.join(cls.dir, "s.svm")
        write_libsvm(cls.svm)
        cls.dense = ["--synthetic", "gaussian-mixture:n=8000,d=12,seed=1", "--model", "logistic"]
        # --scale none: the private scale estimate runs in one process (a multi-process run is refused without it)
        cls.sparse = ["--data", cls.svm, "--model", "logistic", "--features", "50", "--scale", "none"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, result, out):
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            return json.load(f)

    def run_args(self, data, algo, out, *extra):
        return ["run", *data, "--algo", algo, "--seed", 7, "--noise-key-file", KEY_FILE, "--out", out, *extra]

    def test_every_process_count_gives_the_single_process_bits(self):
        out = os.path.join(self.dir, "r.json")
        for name, data in (("dense", self.dense), ("sparse", self.sparse)):
            for algo in ALGORITHMS:
                want = self.report(dpsosp(*self.run_args(data, algo, out)), out)
                self.assertGreater(want["steps"], 10)
                for p in PROCESSES:
                    for threads in (1, 2) if p == 2 else (1,):
                        with self.subTest(data=name, algo=algo, processes=p, threads=threads):
                            got = self.report(mpirun(p, *self.run_args(data, algo, out, "--threads", threads)), out)
                            self.assertEqual(got["x"], want["x"])
                            self.assertEqual((got["steps"], got["epsilon"]), (want["steps"], want["epsilon"]))
                            self.assertEqual(got["processes"], p)

    def test_poisson_sampled_runs_give_the_single_process_bits(self):
        # Batches drawn by the secret key, which every process shares: dpsgd's
        # epochs and spider-mf-adaptive's Poisson passes (banded noise).
        out = os.path.join(self.dir, "r.json")
        for algo, extra in (("dpsgd", ["--epochs", "1"]), ("spider-mf-adaptive", ["--epochs", "3", "--bands", "4"])):
            want = self.report(dpsosp(*self.run_args(self.dense, algo, out, *extra)), out)
            for p in (2, 4):
                with self.subTest(algo=algo, processes=p):
                    got = self.report(mpirun(p, *self.run_args(self.dense, algo, out, *extra)), out)
                    self.assertEqual(got["x"], want["x"])
                    self.assertEqual((got["steps"], got["epsilon"]), (want["steps"], want["epsilon"]))

    def test_streamed_shares_give_the_single_process_bits(self):
        out = os.path.join(self.dir, "r.json")
        for name, source in (("dense", ["--synthetic", "gaussian-mixture:n=8000,d=12,seed=1"]), ("sparse", [self.svm, "--features", "50"])):
            records = os.path.join(self.dir, name + ".dpsr")
            self.assertEqual(dpsosp("convert", *source, records).returncode, 0)
            data = ["--data", records, "--model", "logistic", "--stream"]
            for algo in ALGORITHMS:
                with self.subTest(data=name, algo=algo):
                    want = self.report(dpsosp(*self.run_args(data, algo, out)), out)
                    got = self.report(mpirun(2, *self.run_args(data, algo, out)), out)
                    self.assertEqual(got["x"], want["x"])

    def test_a_rank_with_other_records_ends_the_job_in_one_line(self):
        other = os.path.join(self.dir, "other.svm")
        write_libsvm(other, seed=3)
        out = os.path.join(self.dir, "never.json")
        base = ["mpirun", "--oversubscribe"]
        args = ["run", "--model", "logistic", "--features", "50", "--scale", "none", "--seed", "1", "--out", out, "--data"]
        r = subprocess.run(base + ["-n", "1", BIN, *args, self.svm, ":", "-n", "2", BIN, *args, other],
                           capture_output=True, text=True, timeout=60, env=ENV)
        self.assertNotEqual(r.returncode, 0)
        lines = [l for l in r.stderr.splitlines() if l.startswith("dpsosp: error:")]
        self.assertEqual(lines, ["dpsosp: error: process 1 of 3: its records, start point or options differ from "
                                 "process 0's (every process must be given the same ones)"], r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_killing_a_rank_ends_the_job_within_seconds(self):
        records = os.path.join(self.dir, "long.dpsr")
        self.assertEqual(dpsosp("convert", "--synthetic", "gaussian-mixture:n=2000000,d=4,seed=1", records).returncode, 0)
        out = os.path.join(self.dir, "killed.json")
        job = subprocess.Popen(["mpirun", "--oversubscribe", "-n", "2", BIN, "run", "--model", "logistic", "--data",
                                records, "--stream", "--algo", "dpsgd", "--batch-size", "1", "--seed", "1",
                                "--delta", "1e-8", "--threads", "1", "--out", out], stderr=subprocess.PIPE, text=True, env=ENV)
        # The first progress line: the run is under way (mpirun may print notices first).
        seen = []
        while not seen or ("dpsosp: step" not in seen[-1] and seen[-1] != "" and len(seen) < 50):
            seen.append(job.stderr.readline())
        self.assertIn("dpsosp: step", seen[-1], "".join(seen))
        ranks = subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True, text=True).stdout.split()
        self.assertEqual(len(ranks), 2)
        killed = time.monotonic()
        os.kill(int(ranks[-1]), signal.SIGKILL)
        rest = job.communicate(timeout=30)[1]
        self.assertLess(time.monotonic() - killed, 10)
        self.assertNotEqual(job.returncode, 0)
        self.assertIn("exited on signal 9", rest)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
