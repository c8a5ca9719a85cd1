#!/usr/bin/env node
// ONNX Runtime's (onnxruntime-node) session creation for one or more models in one process, as
// the compile-memory bench compares it with `epctx compile`: creation time of each session, the
// first run of the first model when --input is given, and the process's peak RSS. Prints JSON.
//
// usage: node ort_create.js --model A.onnx [--model B.onnx] [--input NAME=X.npy] [--threads 2]
'use strict';

const ort = require('onnxruntime-node');
const {readNpy} = require('./npy_tensor');

async function main() {
  const args = {models: [], inputs: [], threads: 2};
  for (let i = 2; i < process.argv.length; i += 2) {
    const [key, value] = [process.argv[i], process.argv[i + 1]];
    if (key === '--model') args.models.push(value);
    else if (key === '--input') args.inputs.push(value);
    else if (key === '--threads') args.threads = parseInt(value, 10);
    else throw new Error(`unknown argument ${key}`);
  }
  const out = {create_ms: []};
  const sessions = [];
  for (const model of args.models) {
    const start = process.hrtime.bigint();
    sessions.push(await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'], graphOptimizationLevel: 'all',
      intraOpNumThreads: args.threads, interOpNumThreads: 1,
    }));
    out.create_ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (args.inputs.length > 0) {
    const feeds = {};
    for (const spec of args.inputs) {
      const eq = spec.indexOf('=');
      feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
    }
    const start = process.hrtime.bigint();
    const result = await sessions[0].run(feeds);
    out.first_run_ms = Number(process.hrtime.bigint() - start) / 1e6;
    const first = result[Object.keys(result)[0]];
    out.output_head = Array.from(first.data.slice(0, 8));
  }
  out.max_rss_bytes = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_create: ${e.message}\n`);
  process.exit(1);
});
