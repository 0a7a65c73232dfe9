#!/usr/bin/python3
"""End-to-end speed of dpsosp against a PyTorch DP-SGD peer and the memory floor.

Run from the repository root after building with -DDPSOSP_BUILD_BENCH=ON:

    /usr/bin/python3 bench/compare.py --build build

In one run, on the same synthetic data (gaussian-mixture, n x d, logistic model):

 (a) `dpsosp run --algo dpsgd --batch-size 256`: per-example clipped gradients
     per second (the report's gradient_evaluations / diagnostics.seconds; data
     generation is in diagnostics.load_seconds, not in seconds), against a PyTorch peer doing the same
     DP-SGD step (functorch vmap(grad) per-example gradients, clipping, the
     Gaussian noise, the update; torch.set_num_threads(threads); float64 like
     dpsosp). Goal: at least 10x.
 (b) spider-tree-adaptive: gradients per second against the memory-stream
     floor, one pass of X v over the same records (bench/dpsosp_floor, the
     faster of Eigen's GEMV and a threaded pass, best of 3 passes). Goal: at
     least 0.33x. Measured two ways, both printed:
       - in the floor's own process, right after its passes, on the same
         records: the best of 3 runs of the library's spider-tree-adaptive with
         `dpsosp run`'s defaults (the work is checked against the CLI's
         report), i.e. measured as the floor is;
       - through `dpsosp run` (a fresh process per run): the report's
         gradient_evaluations / diagnostics.seconds, which also holds the one-time costs
         of a fresh process (first touches of the run's memory, the first
         batches' timing of the thread choice) that a pass of the floor does
         not pay.
     `dpsosp run --synthetic` generates the records in the run's sample order,
     so the run reads them front to back (docs/data-formats.md). For context
     the script also prints spider-tree-adaptive in the floor's process on the
     same records kept in their own order, as `dpsosp run --data` keeps a
     file's, which a run reads in a random order; the random-order floor (the
     floor's pass with the records visited in a random permutation); and a
     random-order pass that only reads every cache line of each record (one
     addition a line), what the memory system alone gives in that order.

spider-tree-adaptive's batches depend on its noise, so both runs use the
noise key of tests/data/noise.key (--noise-key-file, to `dpsosp run` and to
dpsosp_floor alike): the same work, checked.

Every measurement is repeated (--repeats, interleaved so that a burst of load
from other processes hits all of them alike) and the medians are compared.
The machine's load average is printed: on a shared machine the ratios move.
Peak memory of the dpsgd run is /usr/bin/time's maximum resident set size.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


CHILD_ENV = dict(os.environ)
# The noise key of both `dpsosp run` and dpsosp_floor's runs: the same noise, so the same work.
NOISE_KEY = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "data", "noise.key")


def run_dpsosp(binary, args, time_v=True):
    """Runs `dpsosp run ARGS --out tmp`; returns (report, max_rss_kb)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [binary, "run"] + args + ["--out", out]
        rss_kb = None
        if time_v and os.path.exists("/usr/bin/time"):
            cmd = ["/usr/bin/time", "-v"] + cmd
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CHILD_ENV)
        if proc.returncode != 0:
            sys.exit("compare.py: %s failed:\n%s" % (" ".join(cmd), proc.stderr[-2000:]))
        for line in proc.stderr.splitlines():
            if "Maximum resident set size" in line:
                rss_kb = int(line.split(":")[1])
        with open(out) as f:
            return json.load(f), rss_kb


def run_floor(binary, spec, threads, repeats, dpsgd_batch=0, spider_runs=0):
    proc = subprocess.run([binary, "--synthetic", spec, "--threads", str(threads), "--repeats", str(repeats),
                           "--dpsgd-batch", str(dpsgd_batch), "--spider", str(spider_runs),
                           "--noise-key-file", os.path.normpath(NOISE_KEY)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CHILD_ENV)
    if proc.returncode != 0:
        sys.exit("compare.py: %s failed:\n%s" % (binary, proc.stderr[-2000:]))
    return json.loads(proc.stdout)


def torch_peer(n, d, batch, steps, threads, seed):
    """The PyTorch DP-SGD step, timed over `steps` steps (data generation excluded)."""
    import torch
    try:
        from torch.func import grad, vmap  # torch >= 2.0
    except ImportError:
        from functorch import grad, vmap  # torch 1.13 (Debian 12)
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(seed)
    # gaussian-mixture: labels +-1, class means +-mu/sqrt(d) * ones (mu = 1), identity covariance.
    y = (torch.rand(n, generator=g) < 0.5).double() * 2 - 1
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    X += y[:, None] * (1.0 / d ** 0.5)
    perm = torch.randperm(n, generator=g)

    def loss(w, xi, yi):  # logistic loss of one record
        return torch.nn.functional.softplus(-yi * torch.dot(xi, w))

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    w = torch.zeros(d, dtype=torch.float64)
    clip, z, lr = 1.0, 1.0, 1.0
    steps = min(steps, n // batch)
    start = time.perf_counter()
    for s in range(steps):
        idx = perm[s * batch:(s + 1) * batch]
        grads = per_example(w, X[idx], y[idx])                            # b x d
        scale = torch.clamp(clip / (grads.norm(dim=1) + 1e-300), max=1.0)  # clip to norm <= clip
        total = (grads * scale[:, None]).sum(0)
        noise = torch.randn(d, generator=g, dtype=torch.float64) * (z * 2 * clip)
        w = w - lr * (total + noise) / batch
    seconds = time.perf_counter() - start
    return {"examples": steps * batch, "seconds": seconds, "per_example_gradients_per_second": steps * batch / seconds,
            "torch": torch.__version__, "threads": threads, "finite": bool(torch.isfinite(w).all())}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build", help="build directory (with dpsosp and bench/dpsosp_floor)")
    p.add_argument("--n", type=int, default=1000000)
    p.add_argument("--d", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--torch-steps", type=int, default=300, help="steps of the PyTorch peer per repeat")
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--thp", action="store_true",
                   help="back the data (of dpsosp and of the floor alike) with transparent huge pages "
                        "(GLIBC_TUNABLES=glibc.malloc.hugetlb=1)")
    p.add_argument("--torch-peer", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.torch_peer:
        print(json.dumps(torch_peer(a.n, a.d, 256, a.torch_steps, a.threads, 1)))
        return 0

    if a.thp:
        CHILD_ENV["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"
    dpsosp = os.path.join(a.build, "dpsosp")
    floor_bin = os.path.join(a.build, "bench", "dpsosp_floor")
    for b in (dpsosp, floor_bin):
        if not os.access(b, os.X_OK):
            sys.exit("compare.py: %s not found; build with -DDPSOSP_BUILD_BENCH=ON and pass --build" % b)
    spec = "gaussian-mixture:n=%d,d=%d" % (a.n, a.d)
    # G = M = 1 given: the runs measure the optimizer, not the private estimate of the constants.
    common = ["--model", "logistic", "--synthetic", spec, "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
              "--G", "1", "--M", "1", "--threads", str(a.threads), "--noise-key-file", os.path.normpath(NOISE_KEY)]
    data_bytes = a.n * a.d * 8
    load_before = load_average()
    print("machine: %d cores (nproc), %s; load average %.2f %.2f %.2f" %
          ((os.cpu_count() or 0), cpu_model(), *load_before))
    print("data: %s (%.0f MB), threads %d, %d repeats (medians)%s" %
          (spec, data_bytes / 1e6, a.threads, a.repeats, ", huge pages (--thp)" if a.thp else ""))

    dpsgd, sta, sta_lib, sta_own, floor, gemv, gather, touch, peer, rss = [], [], [], [], [], [], [], [], [], []
    library_memory = None
    for r in range(a.repeats):
        f = run_floor(floor_bin, spec, a.threads, 3, 256 if r == 0 else 0, 3)
        floor.append(f["rows_per_second"])
        best = min(f["spider_seconds"])
        sta_lib.append((f["spider_gradient_evaluations"] / best, f["spider_samples_used"] / best,
                        f["spider_gradient_evaluations"], f["spider_steps"]))
        sta_own.append(f["spider_gradient_evaluations"] / min(f["spider_own_order_seconds"]))
        gemv.append(f["rows"] / f["gemv_seconds"])
        gather.append(f["gather_rows_per_second"])
        touch.append(f["touch_rows_per_second"])
        if r == 0:
            library_memory = f
        rep, kb = run_dpsosp(dpsosp, common + ["--algo", "dpsgd", "--batch-size", "256"])
        dpsgd.append(rep["gradient_evaluations"] / rep["diagnostics"]["seconds"])
        rss.append(kb)
        rep, _ = run_dpsosp(dpsosp, common + ["--algo", "spider-tree-adaptive"], time_v=False)
        seconds = rep["diagnostics"]["seconds"]
        sta.append((rep["gradient_evaluations"] / seconds, rep["samples_used"] / seconds))
        if (rep["gradient_evaluations"], rep["steps"]) != sta_lib[-1][2:]:
            sys.exit("compare.py: the floor's spider-tree-adaptive runs did other work than `dpsosp run` "
                     "(%d gradients in %d steps against %d in %d)" % (sta_lib[-1][2], sta_lib[-1][3],
                                                                     rep["gradient_evaluations"], rep["steps"]))
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-peer", "--n", str(a.n), "--d",
                               str(a.d), "--threads", str(a.threads), "--torch-steps", str(a.torch_steps)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=CHILD_ENV)
        if proc.returncode != 0:
            sys.exit("compare.py: the PyTorch peer failed:\n" + proc.stderr[-2000:])
        peer.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print("  repeat %d: floor %.3g rows/s, dpsgd %.3g grad/s, spider-tree-adaptive %.3g grad/s in the floor's "
              "process, %.3g through dpsosp run, torch %.3g grad/s"
              % (r + 1, floor[-1], dpsgd[-1], sta_lib[-1][0], sta[-1][0], peer[-1]["per_example_gradients_per_second"]))

    med = statistics.median
    dpsgd_rate = med(dpsgd)
    torch_rate = med([x["per_example_gradients_per_second"] for x in peer])
    sta_rate = med([x[0] for x in sta])
    sta_records = med([x[1] for x in sta])
    lib_rate = med([x[0] for x in sta_lib])
    lib_records = med([x[1] for x in sta_lib])
    own_rate = med(sta_own)
    floor_rate = med(floor)
    gemv_rate = med(gemv)
    gather_rate = med(gather)
    touch_rate = med(touch)
    ratio_a = dpsgd_rate / torch_rate
    ratio_b = lib_rate / floor_rate
    ratio_b_cli = sta_rate / floor_rate
    ratio_b_gemv = lib_rate / gemv_rate
    peak_kb = max(k for k in rss if k is not None) if any(k is not None for k in rss) else None
    load_after = load_average()
    print()
    print("(a) dpsgd, batch 256:            %12.4g per-example clipped gradients/s" % dpsgd_rate)
    print("    PyTorch %s vmap(grad) peer:  %12.4g per-example clipped gradients/s" % (peer[0]["torch"], torch_rate))
    print("    ratio (a) = %.1fx   (goal >= 10x)  %s" % (ratio_a, "MET" if ratio_a >= 10 else "NOT MET"))
    print("(b) memory-stream floor (X v):    %12.4g records/s (best of Eigen's GEMV and a %d-thread pass, "
          "best of 3 passes)" % (floor_rate, a.threads))
    print("    spider-tree-adaptive, in the floor's process (best of 3 runs, as the floor):")
    print("                                  %12.4g gradients/s (%.4g records/s)" % (lib_rate, lib_records))
    print("    ratio (b) = %.2fx  (goal >= 0.33x) %s" % (ratio_b, "MET" if ratio_b >= 0.33 else "NOT MET"))
    print("    spider-tree-adaptive through `dpsosp run` (a fresh process each run, one-time costs included):")
    print("                                  %12.4g gradients/s (%.4g records/s) = %.2fx the floor (%s)"
          % (sta_rate, sta_records, ratio_b_cli, "MET" if ratio_b_cli >= 0.33 else "NOT MET"))
    print("    in-process run against Eigen's single-thread GEMV alone (%.4g records/s): %.2fx"
          % (gemv_rate, ratio_b_gemv))
    print("    the same records kept in their own order (as `dpsosp run --data` keeps a file's; read in a random order),")
    print("      spider-tree-adaptive in the floor's process: %12.4g gradients/s = %.2fx the floor; in the sample order: %.2fx"
          % (own_rate, own_rate / floor_rate, lib_rate / own_rate))
    print("    random-order floor (X v, records in a random order, %d threads): %.4g records/s = %.2fx the stream floor"
          % (a.threads, gather_rate, gather_rate / floor_rate))
    print("    random-order reads only (every line of each record, 32 records prefetched ahead, one addition a line):"
          " %.4g records/s = %.2fx the stream floor" % (touch_rate, touch_rate / floor_rate))
    if peak_kb is not None:
        over = peak_kb * 1024 - data_bytes
        print("memory: `dpsosp run` dpsgd peak RSS %.0f MB = data %.0f MB + %.0f MB (goal: data + 64 MB)"
              % (peak_kb * 1024 / 1e6, data_bytes / 1e6, over / 1e6))
    if library_memory is not None and library_memory.get("peak_rss_kb_after_dpsgd"):
        lib_kb = library_memory["peak_rss_kb_after_dpsgd"]
        print("        the library alone (dpsosp_floor, same data, dpsgd batch 256): peak RSS %.0f MB = data + %.0f MB"
              % (lib_kb * 1024 / 1e6, (lib_kb * 1024 - data_bytes) / 1e6))
    print("load average at the end: %.2f %.2f %.2f" % load_after)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ratio_a": ratio_a, "ratio_b": ratio_b, "ratio_b_cli": ratio_b_cli,
                       "dpsgd_gradients_per_second": dpsgd,
                       "sta_in_process_gradients_per_second": [x[0] for x in sta_lib],
                       "sta_own_order_in_process_gradients_per_second": sta_own,
                       "torch_gradients_per_second": [x["per_example_gradients_per_second"] for x in peer],
                       "sta_gradients_per_second": [x[0] for x in sta],
                       "sta_records_per_second": [x[1] for x in sta], "floor_rows_per_second": floor,
                       "gemv_rows_per_second": gemv, "ratio_b_gemv": ratio_b_gemv,
                       "gather_rows_per_second": gather, "touch_rows_per_second": touch,
                       "library_memory": library_memory,
                       "peak_rss_kb": rss, "data_bytes": data_bytes, "threads": a.threads,
                       "load_average_before": load_before, "load_average_after": load_after,
                       "cpu": cpu_model(), "nproc": os.cpu_count(), "thp": a.thp}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
