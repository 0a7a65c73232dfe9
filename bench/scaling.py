#!/usr/bin/python3
"""Data-parallel runs against the number of processes (docs/scaling.md).

    /usr/bin/python3 bench/scaling.py [--dpsosp build/dpsosp] [--processes 1,2,4]

For each workload, the optimization's seconds (the report's diagnostics) of
`dpsosp run --threads 1` alone and of `mpirun --oversubscribe -n P` for each
P, the same x bits checked; then the message costs of this machine's MPI
(a ping-pong of 8 bytes and of 1 MiB between two ranks, compiled with mpicxx)
and the model of docs/scaling.md with them:

    T(P) = S + C / min(P, cores) + A + steps * (hops + rounds) * (lat + bytes / bw)

with S + C + A = T(1) and A / (C + A), the chained adds' share of the
per-record work, from --add-share. A machine with fewer cores than P
oversubscribes its cores (mpirun --oversubscribe), which the model's
min(P, cores) and the measured latency under load only roughly capture.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
KEY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "noise.key")
WORKLOADS = [
    ("logistic, dpsgd b=4096, d=100", ["--synthetic", "gaussian-mixture:n=300000,d=100,seed=1", "--model", "logistic",
                                       "--algo", "dpsgd", "--batch-size", "4096"], 100),
    ("mlp h=32, dpsgd b=1024, d=3298", ["--synthetic", "gaussian-mixture:n=100000,d=100,seed=1", "--model", "mlp",
                                        "--hidden", "32", "--algo", "dpsgd", "--batch-size", "1024"], 3298),
    ("logistic, spider-tree-adaptive, d=100", ["--synthetic", "gaussian-mixture:n=300000,d=100,seed=1", "--model",
                                               "logistic"], 100),
]

PINGPONG = r"""
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int bytes : {8, 1 << 20}) {
    std::vector<char> buf(bytes);
    const int reps = bytes == 8 ? 20000 : 200;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; ++i) {
      if (rank == 0) { MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD); MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
      else { MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD); }
    }
    double half = (MPI_Wtime() - t0) / reps / 2;
    if (rank == 0) std::printf("%d %.9g\n", bytes, half);
  }
  MPI_Finalize();
}
"""


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=1800)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return r


def message_costs(work):
    """(latency s, bandwidth bytes/s) of a one-way message between two ranks."""
    if shutil.which("mpicxx") is None:
        return None
    src, exe = os.path.join(work, "pingpong.cpp"), os.path.join(work, "pingpong")
    with open(src, "w") as f:
        f.write(PINGPONG)
    run(["mpicxx", "-O2", src, "-o", exe])
    out = run(["mpirun", "--oversubscribe", "-n", "2", exe]).stdout.split()
    small, large = float(out[1]), float(out[3])
    return small, (1 << 20) / max(large - small, 1e-12)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpsosp", default="build/dpsosp")
    ap.add_argument("--processes", default="1,2,4")
    ap.add_argument("--add-share", type=float, default=0.25,
                    help="A / (C + A): the chained adds' share of the per-record work (docs/scaling.md)")
    a = ap.parse_args()
    ps = [int(p) for p in a.processes.split(",")]
    cores = os.cpu_count() or 1
    work = tempfile.mkdtemp()
    costs = message_costs(work)
    if costs:
        print("messages between two ranks: latency %.2f us, bandwidth %.2f GB/s (ping-pong, mpirun -n 2)" %
              (costs[0] * 1e6, costs[1] / 1e9))
    print("\n| workload | P | seconds | steps | model, seconds | same x bits |")
    print("|---|---|---|---|---|---|")
    for name, args, d in WORKLOADS:
        out = os.path.join(work, "r.json")
        common = ["run", *args, "--seed", "3", "--epsilon", "2", "--noise-key-file", KEY, "--threads", "1",
                  "--no-certificate", "--out", out]
        run([a.dpsosp, *common])
        with open(out) as f:
            base = json.load(f)
        t1 = base["diagnostics"]["seconds"]
        steps = base["steps"]
        for p in ps:
            run(["mpirun", "--oversubscribe", "-n", str(p), a.dpsosp, *common])
            with open(out) as f:
                rep = json.load(f)
            model = ""
            if costs:
                lat, bw = costs
                hops = p - 1 + math.ceil(math.log2(p)) if p > 1 else 0
                message = lambda: lat + 8 * (d + 3) / bw
                per_record = t1  # S is small against C + A here: every step's noise is d numbers
                predicted = per_record * (1 - a.add_share) / min(p, cores) + per_record * a.add_share + \
                    steps * hops * message()
                model = "%.3f" % predicted
            print("| %s | %d | %.3f (alone: %.3f) | %d | %s | %s |" % (
                name, p, rep["diagnostics"]["seconds"], t1, rep["steps"], model,
                "yes" if rep["x"] == base["x"] else "NO"))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
