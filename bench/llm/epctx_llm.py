#!/usr/bin/python3
"""epctx side of bench/llm: the same greedy generation as ort_llm.js (read it for the protocol),
through epctx's Python module (zero-copy NumPy inputs and outputs), in this fresh process. Prints
one JSON object on stdout. When --prefill and --decode name the same file (ONNX Runtime GenAI's
layout), one session runs both, fed an attention mask of ones, and the prompt empty pasts.

usage: epctx_llm.py --prefill P_ctx.onnx --decode D_ctx.onnx --prompt IDS.npy [--tokens 32]
                    [--threads 1] [--at 16,256,1024] [--at-runs 5] [--mark-steps]
(the epctx module must be importable: PYTHONPATH=build/python)

--mark-steps writes a line "epctx_llm: creation", "epctx_llm: prefill", "epctx_llm: step K" to
stdout before each phase, after flushing C's stdio buffers, so that what the libraries print
there (oneDNN's ONEDNN_VERBOSE lines) falls between the marks of the phase it happened in.
"""

import argparse
import ctypes
import json
import os
import time

import numpy as np

import epctx


def rss_bytes(field="VmRSS"):
    """A resident-memory line of /proc/self/status in bytes: VmRSS (all), RssAnon (private)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


_LIBC = ctypes.CDLL(None)


def mark(enabled, what):
    """The phase mark of --mark-steps, after whatever C code printed before it."""
    if enabled:
        _LIBC.fflush(None)
        os.write(1, f"epctx_llm: {what}\n".encode())


def past_names(session):
    return [i.name for i in session.get_inputs()
            if i.name.startswith("past.") or i.name.startswith("past_key_values.")]


def present_of(past):
    for prefix in ("past_key_values.", "past."):
        if past.startswith(prefix):
            return "present." + past[len(prefix):]
    return past


def with_mask(session, feeds, total):
    """feeds plus an attention mask of ones over `total` positions where the graph has one."""
    if any(i.name == "attention_mask" for i in session.get_inputs()):
        feeds["attention_mask"] = np.ones((1, total), dtype=np.int64)
    return feeds


def with_empty_pasts(session, feeds):
    """feeds plus empty pasts ([1, kv_heads, 0, head_dim]) for a prompt run through a graph
    that takes pasts."""
    dtypes = {"tensor(float)": np.float32, "tensor(float16)": np.float16}
    pasts = set(past_names(session))
    for i in session.get_inputs():
        if i.name in pasts:
            feeds[i.name] = np.zeros((1, i.shape[1], 0, i.shape[3]), dtype=dtypes[i.type])
    return feeds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prefill", required=True)
    p.add_argument("--decode", required=True)
    p.add_argument("--prompt", required=True)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--at", default="")
    p.add_argument("--at-runs", type=int, default=5)
    p.add_argument("--mark-steps", action="store_true")
    a = p.parse_args()
    so = epctx.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.add_session_config_entry("epctx.fallback", "deny")
    out = {"engine": "epctx", "threads": a.threads}
    mark(a.mark_steps, "creation")
    t = time.perf_counter()
    prefill = epctx.InferenceSession(a.prefill, so)
    out["create_prefill_ms"] = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    decode = prefill if a.decode == a.prefill else epctx.InferenceSession(a.decode, so)
    out["create_decode_ms"] = (time.perf_counter() - t) * 1e3
    out["rss_after_creation"] = rss_bytes()

    prompt = np.load(a.prompt)
    names = [o.name for o in prefill.get_outputs()]
    mark(a.mark_steps, "prefill")
    feeds = with_empty_pasts(prefill, with_mask(prefill, {"input_ids": prompt}, prompt.shape[1]))
    t = time.perf_counter()
    result = dict(zip(names, prefill.run(None, feeds)))
    out["prefill_ms"] = (time.perf_counter() - t) * 1e3
    tokens = [int(result["logits"][0, -1].argmax())]
    pasts = past_names(decode)
    dnames = [o.name for o in decode.get_outputs()]
    steps = []
    for step in range(a.tokens):
        mark(a.mark_steps, f"step {step + 1}")
        feeds = {"input_ids": np.array([[tokens[-1]]], dtype=np.int64)}
        for name in pasts:
            feeds[name] = result[present_of(name)]
        with_mask(decode, feeds, feeds[pasts[0]].shape[2] + 1)
        t = time.perf_counter()
        result = dict(zip(dnames, decode.run(None, feeds)))
        steps.append((time.perf_counter() - t) * 1e3)
        tokens.append(int(result["logits"][0, -1].argmax()))
    out["decode_ms"] = steps
    out["tokens"] = tokens
    out["rss_after_generation"] = rss_bytes()
    out["anon_after_generation"] = rss_bytes("RssAnon")

    mark(a.mark_steps, "end")
    out["at"] = {}
    for length in [int(x) for x in a.at.split(",") if x]:
        rng = np.random.default_rng(12345)
        feeds = with_mask(decode, {"input_ids": np.array([[1]], dtype=np.int64)}, length + 1)
        for name in pasts:
            like = result[present_of(name)]
            shape = (like.shape[0], like.shape[1], length, like.shape[3])
            feeds[name] = (rng.random(shape, dtype=np.float32) - 0.5).astype(np.float32)
        times = []
        for _ in range(a.at_runs):
            t = time.perf_counter()
            decode.run(None, feeds)
            times.append((time.perf_counter() - t) * 1e3)
        out["at"][str(length)] = times
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
