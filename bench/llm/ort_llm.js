#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) side of bench/llm: a greedy generation with a prefill and a
// decode graph (tests/models/export_llama.py's I/O: input_ids; past.L.key/value ->
// present.L.key/value, logits), in this fresh process:
//   - creation of the prefill session, then of the decode session (one session when both are
//     the same file: ONNX Runtime GenAI's layout, tests/models/export_llama_genai.py, whose
//     pasts are past_key_values.L.key/value, and whose attention_mask input is fed ones; the
//     prompt runs with empty pasts)
//   - prefill of the prompt (its first token is the argmax of the last position's logits)
//   - --tokens decode steps, each feeding the previous step's presents as its pasts
//   - per-token time at given past lengths (--at 16,256,1024): decode steps on pasts of that
//     length (seeded values), --at-runs of them each
//   - the RSS after creating the sessions and after the generation (VmRSS, and RssAnon: private)
// Prints one JSON object on stdout. Session options: CPU provider, graph optimization level
// --optimization (all unless given: disabled, basic, extended, all), --threads intra-op threads,
// sequential execution.
//
// usage: node ort_llm.js --prefill P.onnx --decode D.onnx --prompt IDS.npy [--tokens 32]
//                        [--threads 1] [--at 16,256,1024] [--at-runs 5] [--optimization all]
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node'));

function parseArgs(argv) {
  const a = {tokens: 32, threads: 1, at: [], atRuns: 5, optimization: 'all'};
  for (let i = 2; i < argv.length; i += 2) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--prefill': a.prefill = v; break;
      case '--decode': a.decode = v; break;
      case '--prompt': a.prompt = v; break;
      case '--tokens': a.tokens = parseInt(v, 10); break;
      case '--threads': a.threads = parseInt(v, 10); break;
      case '--at': a.at = v.split(',').filter((s) => s).map((s) => parseInt(s, 10)); break;
      case '--at-runs': a.atRuns = parseInt(v, 10); break;
      case '--optimization': a.optimization = v; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!a.prefill || !a.decode || !a.prompt) throw new Error('--prefill, --decode and --prompt are required');
  return a;
}

function readInt64Npy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!/'descr':\s*'<i8'/.test(header)) throw new Error(`${file}: not an int64 .npy`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = buf.subarray(10 + headerLen);
  return {shape, data: new BigInt64Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))};
}

// A resident-memory line of /proc/self/status in bytes: VmRSS (all), RssAnon (private).
function rssBytes(field = 'VmRSS') {
  const m = fs.readFileSync('/proc/self/status', 'latin1').match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return m ? Number(m[1]) * 1024 : 0;
}

function argmaxLast(logits) {
  const vocab = logits.dims[logits.dims.length - 1];
  const base = logits.data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; i++) if (logits.data[base + i] > logits.data[base + best]) best = i;
  return best;
}

// Past names in a graph's input order, and the present each is fed from.
function pastNames(session) {
  return session.inputNames.filter((n) => n.startsWith('past.') || n.startsWith('past_key_values.'));
}
function presentOf(past) {
  return past.replace(/^past_key_values\./, 'present.').replace(/^past\./, 'present.');
}

// The feeds besides input_ids and the pasts: an attention mask of ones over `total` positions
// where the graph has one.
function addMask(session, feeds, total) {
  if (session.inputNames.includes('attention_mask')) {
    feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]);
  }
  return feeds;
}

// Empty pasts ([1, kv_heads, 0, head_dim]) for a prompt run through a graph that takes pasts.
function addEmptyPasts(session, feeds) {
  const pasts = new Set(pastNames(session));
  for (const m of session.inputMetadata) {
    if (!pasts.has(m.name)) continue;
    const dims = [1, m.shape[1], 0, m.shape[3]];
    feeds[m.name] = new ort.Tensor(m.type, m.type === 'float16' ? new Uint16Array(0) : new Float32Array(0), dims);
  }
  return feeds;
}

async function main() {
  const a = parseArgs(process.argv);
  const options = {executionProviders: ['cpu'], graphOptimizationLevel: a.optimization,
                   intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential'};
  const prompt = readInt64Npy(a.prompt);
  const out = {engine: 'onnxruntime-node', version: ort.env.versions ? ort.env.versions.common : '1.30.0',
               threads: a.threads};
  let t = process.hrtime.bigint();
  const prefill = await ort.InferenceSession.create(a.prefill, options);
  out.create_prefill_ms = Number(process.hrtime.bigint() - t) / 1e6;
  t = process.hrtime.bigint();
  const decode = a.decode === a.prefill ? prefill : await ort.InferenceSession.create(a.decode, options);
  out.create_decode_ms = Number(process.hrtime.bigint() - t) / 1e6;
  out.rss_after_creation = rssBytes();

  const promptFeeds = {input_ids: new ort.Tensor('int64', prompt.data, prompt.shape)};
  addEmptyPasts(prefill, addMask(prefill, promptFeeds, prompt.shape[1]));
  t = process.hrtime.bigint();
  let result = await prefill.run(promptFeeds);
  out.prefill_ms = Number(process.hrtime.bigint() - t) / 1e6;
  const tokens = [argmaxLast(result.logits)];
  const pasts = pastNames(decode);
  const steps = [];
  for (let i = 0; i < a.tokens; i++) {
    const feeds = {input_ids: new ort.Tensor('int64', BigInt64Array.from([BigInt(tokens[tokens.length - 1])]), [1, 1])};
    for (const p of pasts) feeds[p] = result[presentOf(p)];
    addMask(decode, feeds, feeds[pasts[0]].dims[2] + 1);
    t = process.hrtime.bigint();
    result = await decode.run(feeds);
    steps.push(Number(process.hrtime.bigint() - t) / 1e6);
    tokens.push(argmaxLast(result.logits));
  }
  out.decode_ms = steps;
  out.tokens = tokens;
  out.rss_after_generation = rssBytes();
  out.anon_after_generation = rssBytes('RssAnon');

  // Per-token time at fixed past lengths, on seeded pasts.
  out.at = {};
  for (const length of a.at) {
    const feeds = addMask(decode, {input_ids: new ort.Tensor('int64', BigInt64Array.from([1n]), [1, 1])},
                          length + 1);
    for (const p of pasts) {
      const like = result[presentOf(p)];
      const dims = [like.dims[0], like.dims[1], length, like.dims[3]];
      const n = dims.reduce((x, y) => x * y, 1);
      const data = new Float32Array(n);
      let seed = 12345;
      for (let i = 0; i < n; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
        data[i] = seed / 0x80000000 - 0.5;
      }
      feeds[p] = new ort.Tensor('float32', data, dims);
    }
    const times = [];
    for (let r = 0; r < a.atRuns; r++) {
      t = process.hrtime.bigint();
      await decode.run(feeds);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    out.at[length] = times;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(`ort_llm: ${e.message}`);
  process.exit(1);
});
