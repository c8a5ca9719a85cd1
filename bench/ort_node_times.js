#!/usr/bin/env node
// Time of each node's kernel in ONNX Runtime (onnxruntime-node), from its own profiler: for one
// model and its inputs (.npy), one session with --threads intra-op threads runs --runs times
// after one warm-up run; prints {"node name": [microseconds per run, ...]} as JSON. The times
// are ORT's "<node>_kernel_time" events, the same as epctx's profile (`epctx perf -p`) records,
// so the two compare kernels without either harness around them.
//
// usage: node ort_node_times.js --model M.onnx --input NAME=X.npy ... [--runs 100] [--threads 1]
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy} = require('./npy_tensor');

async function main() {
  const args = {runs: 100, threads: 1, inputs: []};
  for (let i = 2; i < process.argv.length; i += 2) {
    const [key, value] = [process.argv[i], process.argv[i + 1]];
    if (key === '--model') args.model = value;
    else if (key === '--input') args.inputs.push(value);
    else if (key === '--runs') args.runs = parseInt(value, 10);
    else if (key === '--threads') args.threads = parseInt(value, 10);
    else throw new Error(`unknown argument ${key}`);
  }
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ort_prof_')), 'p');
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', intraOpNumThreads: args.threads,
    interOpNumThreads: 1, executionMode: 'sequential', enableProfiling: true,
    profileFilePrefix: prefix,
  });
  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  for (let r = 0; r <= args.runs; ++r) await session.run(feeds);
  session.endProfiling();
  const dir = path.dirname(prefix);
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f))[0];
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, {recursive: true});
  const times = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const node = e.name.slice(0, -'_kernel_time'.length);
    (times[node] = times[node] || []).push(e.dur);
  }
  for (const node of Object.keys(times)) times[node] = times[node].slice(1);  // the warm-up
  console.log(JSON.stringify(times));
}

main().catch((e) => {
  console.error(`ort_node_times: ${e.message}`);
  process.exit(1);
});
