"""Helpers shared by the parts of bench/run.py: paths, running commands, the machine's facts."""

import json
import mmap
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
RESULTS = os.path.join(BENCH, "results")
TMP = os.path.join(RESULTS, "tmp")
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")
# A 1-minute load average at or above this means other work shares the cores: timings would be
# noise, so run.py refuses to measure unless --force, and marks a forced report.
BUSY_LOADAVG = 1.0


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


class CommandFailed(Exception):
    """A measured command exited non-zero; the message holds the tail of its stderr."""


def run(cmd, **kw):
    """Runs `cmd`, returns its stdout; raises CommandFailed with its stderr's tail on failure."""
    log(" ".join(cmd))
    p = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        tail = "\n".join(p.stderr.strip().splitlines()[-15:])
        raise CommandFailed(f"{os.path.basename(cmd[0])} {' '.join(cmd[1:2])} exited with "
                            f"{p.returncode}:\n{tail}")
    return p.stdout


def run_shown(cmd):
    """Runs a preparation step (build, export) with its output shown; raises CommandFailed."""
    log(" ".join(cmd))
    p = subprocess.run(cmd, stdout=sys.stderr)
    if p.returncode != 0:
        raise CommandFailed(f"{os.path.basename(cmd[0])} {' '.join(cmd[1:2])} exited with "
                            f"{p.returncode}")


def run_json(cmd):
    return json.loads(run(cmd))


def warm_page_cache(paths):
    """Brings each file into the page cache (as it would be after a run): this VM drops files
    unused for about a minute, which made a measurement after a pause a cold start. A context
    blob (.epctx) is cached the way epctx's own load leaves it (warm_blob); any other file is read
    once, as ONNX Runtime reads its model."""
    for path in paths:
        if path.endswith(".epctx"):
            warm_blob(path)
            continue
        with open(path, "rb") as f:
            while f.read(8 << 20):
                pass


def warm_blob(path):
    """Drops the blob from the page cache, then faults it in through a mapping advised
    MADV_HUGEPAGE, as epctx's loader maps it: the cache then holds it in 2 MiB folios, each
    mapped by a later process with one page-table entry. Read with read() instead, it was cached
    partly in small folios, and every fresh process's first inference paid a page-table entry per
    4 KiB (ResNet-50 at 2 threads on an AMD EPYC Zen 5 VM: 48-53 ms against 36-47 ms, 5 processes
    each). epctx itself never reads its blob that way; a blob copied by cp or read by a backup
    tool is, which docs/LOADING.md describes."""
    fd = os.open(path, os.O_RDONLY)
    try:
        # Drops clean pages only: compile fsyncs the blob before it ends.
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        size = os.fstat(fd).st_size
        if size == 0:
            return
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
            m.madvise(mmap.MADV_HUGEPAGE)
            for offset in range(0, size, mmap.PAGESIZE):
                m[offset]
    finally:
        os.close(fd)


def _read_bandwidth(start, result):
    """One reader of memory_bandwidth: 256 MiB of its own, read 8 times by memchr (bytes.find of
    a byte it does not hold) once `start` is set; puts bytes per second into `result`."""
    data = bytearray(256 << 20)
    # Every page written: memory of its own, not the shared zero page.
    data[::4096] = b"\x02" * (len(data) // 4096)
    start.wait()
    t = time.perf_counter()
    for _ in range(8):
        data.find(b"\x01")
    result.put(8 * len(data) / (time.perf_counter() - t))


def memory_bandwidth(processes=(1, 2)):
    """Read bandwidth of main memory in GB/s with 1 and with 2 processes reading at once: this
    VM's host shares it, and what two cores get varies from one hour to the next (seen: 46-48,
    then 31-35 GB/s on the same machine), which moves every bandwidth-bound figure at 2 threads
    (a float32 decode step reads all its weights). Reported beside such figures."""
    out = {}
    for n in processes:
        start, result = multiprocessing.Event(), multiprocessing.Queue()
        readers = [multiprocessing.Process(target=_read_bandwidth, args=(start, result))
                   for _ in range(n)]
        for r in readers:
            r.start()
        time.sleep(1.0)  # every reader has its buffer
        start.set()
        rates = [result.get() for _ in readers]
        for r in readers:
            r.join()
        out[str(n)] = round(sum(rates) / 1e9, 1)
    return out


def bandwidth_text(start, end):
    """memory_bandwidth's figures at the start and the end of a run, as the reports print them."""
    cell = lambda b: f"{b['1']} / {b['2']} GB/s"  # noqa: E731
    return (f"memory read bandwidth with 1 / 2 readers {cell(start)} at the start, {cell(end)} "
            "at the end")


def summarize(values):
    """median, min, max and count of the values that are not None (None when there are none)."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def build_epctx(build_dir):
    exe = os.path.join(build_dir, "bin", "epctx")
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    run_shown(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
               "-DEPCTX_BUILD_BENCH=OFF", "-DEPCTX_BUILD_TESTS=OFF", *launcher])
    run_shown(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2), "--target", "epctx_cli"])
    return exe


def ensure_onnxruntime_node():
    """Installs onnxruntime-node into bench/node_modules (package.json pins 1.30.0) when missing."""
    if not os.path.isdir(os.path.join(BENCH, "node_modules", "onnxruntime-node")):
        run_shown(["npm", "install", "--prefix", BENCH, "--ignore-scripts", "--no-audit",
                   "--no-fund"])


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def environment(epctx, node, loadavg_start):
    ort_pkg = os.path.join(BENCH, "node_modules", "onnxruntime-node", "package.json")
    with open(ort_pkg) as f:
        ort_version = json.load(f)["version"]
    return {
        "cpu": cpu_model(), "cores": os.cpu_count(), "kernel": platform.release(),
        "epctx_version": run([epctx, "--version"]).strip(),
        "ort_version": ort_version, "node": run([node, "--version"]).strip(),
        "loadavg_start": "%.2f" % loadavg_start,
        "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], text=True,
                              stdout=subprocess.PIPE).stdout.strip(),
    }

def cpu_facts():
    facts = {"name": cpu_model()}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key in ("cpu family", "model", "stepping") and key not in facts:
                facts[key] = value
            if key == "flags":
                flags = value.split()
                facts["isa"] = ", ".join(x for x in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16",
                                                     "amx_tile", "f16c") if x in flags)
                break
    return facts


def cpu_title(facts):
    """The heading a bench report gives a CPU: "AMD EPYC (family 23, model 1)"."""
    return f"{facts['name']} (family {facts.get('cpu family')}, model {facts.get('model')})"


def write_cpu_section(doc, head, title, section):
    """Writes `doc` as `head` plus one section per CPU, this CPU's `section` replacing its own:
    earlier CPUs' tables are kept."""
    sections = {}
    if os.path.exists(doc):
        with open(doc) as f:
            for part in f.read().split("\n## ")[1:]:
                sections[part.split("\n", 1)[0]] = "## " + part.rstrip() + "\n"
    sections[title] = section
    with open(doc, "w") as f:
        f.write(head + "\n".join(sections.values()))
