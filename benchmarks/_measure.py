"""Run a module (``-m mod args…``) or code (``-c code``) in this process, then write its own wall time,
CPU time and peak RSS as JSON to the file named first. Used by the benchmarks to measure fresh processes."""

import json
import resource
import runpy
import sys
import time

out_file, mode, target, *rest = sys.argv[1:]
t0 = time.perf_counter()
code = 0
try:
    if mode == "-m":
        sys.argv = [target, *rest]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        exec(compile(target, "<bench>", "exec"), {"__name__": "__main__", "ARGS": rest})
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
ru = resource.getrusage(resource.RUSAGE_SELF)
with open(out_file, "w") as f:
    json.dump({"wall": time.perf_counter() - t0, "cpu": ru.ru_utime + ru.ru_stime,
               "peak_rss_mb": ru.ru_maxrss / 1024, "exit": code}, f)
sys.exit(code)
