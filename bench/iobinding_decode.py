#!/usr/bin/python3
"""Decode steps with and without GroupQueryAttention's shared past/present buffer, through the
Python IOBinding API as an onnxruntime user writes the loop. The graph has SmolLM-135M's
attention shapes: 30 layers of GroupQueryAttention (9 query heads over 3 KV heads, head size 64)
in a chain, each with its own KV cache; the shared buffers have max_sequence_length 2048 rows.

- unshared: each run allocates its presents (past + 1 rows), which go back in as the next run's
  pasts (OrtValues, no copy by the engine); the operator copies every past row into the new
  present, 2 * 30 * 3 * 64 * 4 = 46080 bytes per past token.
- shared: past_key_i and present_key_i (and the values) bound to one OrtValue of 2048 rows per
  layer; each run writes only the new rows, in place.

For each past length the caches start with that many rows of random values and --steps tokens
are decoded, in --reps sessions per loop, alternating which loop goes first. Per token: the
engine's time (the profile's model_run duration) and the loop's wall time (Python included),
medians over the tokens, then the median over the sessions; the bytes the engine copied after the last node
(the profile's output_bytes_copied, summed over the outputs) and the KV bytes the operator
copies into new presents (unshared: the past rows, which it must copy to make a present of its
own; shared: none).

usage: PYTHONPATH=build/python bench/iobinding_decode.py [--threads 1] [--steps 16]
       [--pasts 128,512,1024,2000] [--reps 3]
Prints a markdown table.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import epctx

LAYERS, HEADS, KV_HEADS, HEAD, MAX_LEN = 30, 9, 3, 64, 2048


def decoder():
    inputs = [helper.make_tensor_value_info("query", TP.FLOAT, [1, 1, HEADS * HEAD]),
              helper.make_tensor_value_info("key", TP.FLOAT, [1, 1, KV_HEADS * HEAD]),
              helper.make_tensor_value_info("value", TP.FLOAT, [1, 1, KV_HEADS * HEAD]),
              helper.make_tensor_value_info("seqlens_k", TP.INT32, [1]),
              helper.make_tensor_value_info("total_sequence_length", TP.INT32, [])]
    outputs, nodes, query = [], [], "query"
    for i in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}_{i}", TP.FLOAT,
                                                        [1, KV_HEADS, "past", HEAD]))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", TP.FLOAT,
                                                         [1, KV_HEADS, "total", HEAD]))
        out = "output" if i == LAYERS - 1 else f"hidden_{i}"
        nodes.append(helper.make_node(
            "GroupQueryAttention",
            [query, "key", "value", f"past_key_{i}", f"past_value_{i}", "seqlens_k",
             "total_sequence_length"],
            [out, f"present_key_{i}", f"present_value_{i}"], name=f"gqa_{i}",
            domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS))
        query = out
    outputs.insert(0, helper.make_tensor_value_info("output", TP.FLOAT, [1, 1, HEADS * HEAD]))
    model = helper.make_model(helper.make_graph(nodes, "smollm_attention", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


def cache_names():
    return [f"{kind}_{i}" for i in range(LAYERS) for kind in ("key", "value")]


def step_inputs(rng, t):
    return {"query": rng.uniform(-1, 1, (1, 1, HEADS * HEAD)).astype(np.float32),
            "key": rng.uniform(-1, 1, (1, 1, KV_HEADS * HEAD)).astype(np.float32),
            "value": rng.uniform(-1, 1, (1, 1, KV_HEADS * HEAD)).astype(np.float32),
            "seqlens_k": np.array([t], np.int32),
            "total_sequence_length": np.array([t + 1], np.int32)}


def run_unshared(sess, past, steps, rng):
    binding = sess.io_binding()
    pasts = {n: epctx.OrtValue.ortvalue_from_numpy(
        rng.uniform(-1, 1, (1, KV_HEADS, past, HEAD)).astype(np.float32)) for n in cache_names()}
    walls = []
    for t in range(past, past + steps):
        start = time.perf_counter()
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        for name, array in step_inputs(rng, t).items():
            binding.bind_cpu_input(name, array)
        for n, value in pasts.items():
            binding.bind_ortvalue_input("past_" + n, value)
        binding.bind_output("output")
        for n in cache_names():
            binding.bind_output("present_" + n)
        sess.run_with_iobinding(binding)
        values = binding.get_outputs()
        pasts = dict(zip(cache_names(), values[1:]))
        walls.append(time.perf_counter() - start)
    return walls


def run_shared(sess, past, steps, rng):
    binding = sess.io_binding()
    caches = {}
    for n in cache_names():
        buffer = np.zeros((1, KV_HEADS, MAX_LEN, HEAD), np.float32)
        buffer[:, :, :past, :] = rng.uniform(-1, 1, (1, KV_HEADS, past, HEAD))
        caches[n] = epctx.OrtValue.ortvalue_from_numpy(buffer)
    walls = []
    for t in range(past, past + steps):
        start = time.perf_counter()
        for name, array in step_inputs(rng, t).items():
            binding.bind_cpu_input(name, array)
        for n, cache in caches.items():
            binding.bind_ortvalue_input("past_" + n, cache)
            binding.bind_ortvalue_output("present_" + n, cache)
        binding.bind_output("output")
        sess.run_with_iobinding(binding)
        binding.get_outputs()
        walls.append(time.perf_counter() - start)
    return walls


def measure(model, loop, past, steps, threads, work):
    profile = os.path.join(work, f"{loop.__name__}_{past}.json")
    so = epctx.SessionOptions()
    so.add_session_config_entry("session.intra_op_num_threads", str(threads))
    so.add_session_config_entry("epctx.profile_file", profile)
    sess = epctx.InferenceSession(model, so)
    rng = np.random.default_rng(past)
    loop(sess, past, 2, rng)  # warm-up: kernels prepared, buffers pooled
    walls = loop(sess, past, steps, rng)
    del sess
    with open(profile) as f:
        runs = [e for e in json.load(f) if e["name"] == "model_run"][2:]
    engine_ms = statistics.median(e["dur"] for e in runs) / 1000
    copied = max(int(e["args"]["output_bytes_copied"]) for e in runs)
    return engine_ms, statistics.median(walls) * 1000, copied


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--pasts", default="128,512,1024,2000")
    ap.add_argument("--reps", type=int, default=3,
                    help="sessions per loop and past, alternating which loop goes first")
    args = ap.parse_args()
    model = decoder()
    kv_row = 2 * LAYERS * KV_HEADS * HEAD * 4  # bytes of one token's keys and values
    print(f"epctx {epctx.__version__}, {LAYERS} layers, {HEADS}/{KV_HEADS} heads of {HEAD}, "
          f"max length {MAX_LEN}, {args.threads} thread(s), medians of {args.steps} tokens "
          f"in {args.reps} sessions per loop",
          file=sys.stderr)
    print("| past | unshared: engine ms/token | wall | shared: engine ms/token | wall | "
          "engine saves | KV bytes copied per token, unshared | shared | engine output copies |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for past in (int(p) for p in args.pasts.split(",")):
            results = {run_unshared: [], run_shared: []}
            for rep in range(args.reps):
                order = [run_unshared, run_shared] if rep % 2 == 0 else [run_shared, run_unshared]
                for loop in order:
                    results[loop].append(measure(model, loop, past, args.steps, args.threads,
                                                 work))
            u_ms, u_wall, s_ms, s_wall = (
                statistics.median(r[i] for r in results[loop])
                for loop, i in ((run_unshared, 0), (run_unshared, 1), (run_shared, 0),
                                (run_shared, 1)))
            u_copied = max(r[2] for r in results[run_unshared])
            s_copied = max(r[2] for r in results[run_shared])
            print(f"| {past} | {u_ms:.3f} | {u_wall:.3f} | {s_ms:.3f} | {s_wall:.3f} | "
                  f"{u_ms - s_ms:.3f} ({100 * (u_ms - s_ms) / u_ms:.0f}%) | "
                  f"{past * kv_row / 1e6:.1f} MB | 0 | {u_copied} / {s_copied} B |")


if __name__ == "__main__":
    main()
