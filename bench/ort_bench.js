#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) side of bench/run.sh: for one model and one input .npy, in this
// fresh process:
//   - session creation: the first, then each further one (sessions 2..N, kept alive)
//   - the first inference (first session), steady-state latency (--runs timed runs)
//   - memory with 1, 4, 16, ... sessions alive (each having run once): process.memoryUsage()
//     and /proc/self/smaps_rollup (Rss, Pss, Anonymous)
//   - with --processes P: P child processes (this script in --child mode), each creating one
//     session and running it once; their smaps_rollup is summed while all are alive.
// Prints one JSON object on stdout.
//
// Session options, the same for every session: CPU execution provider, graph optimization level
// all, --threads intra-op threads (0: ORT's default, all cores), 1 inter-op thread, sequential
// execution mode.
//
// usage: node ort_bench.js --model M.onnx --input [NAME=]X.npy ... [--sessions 16] [--runs 20]
//                          [--threads 0] [--processes 0]
// --input is repeatable; without NAME= the file feeds the model's first input.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const args = { sessions: 16, runs: 20, threads: 0, processes: 0, child: false, inputs: [] };
  for (let i = 2; i < argv.length; i++) {
    const key = argv[i];
    if (key === '--child') { args.child = true; continue; }
    const value = argv[++i];
    if (value === undefined) throw new Error(`missing value for ${key}`);
    switch (key) {
      case '--model': args.model = value; break;
      case '--input': args.inputs.push(value); break;
      case '--sessions': args.sessions = parseInt(value, 10); break;
      case '--runs': args.runs = parseInt(value, 10); break;
      case '--threads': args.threads = parseInt(value, 10); break;
      case '--processes': args.processes = parseInt(value, 10); break;
      default: throw new Error(`unknown argument ${key}`);
    }
  }
  if (!args.model || args.inputs.length === 0) throw new Error('--model and --input are required');
  return args;
}

// .npy dtypes read here (what tests/models/export_*.py and bench/run.py write).
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
};

// A little-endian C-order .npy file of one of NPY_TYPES.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = (header.match(/'descr':\s*'([^']*)'/) || [])[1];
  if (!NPY_TYPES[descr]) {
    throw new Error(`${file}: dtype ${descr} not supported (${Object.keys(NPY_TYPES)}): ${header}`);
  }
  const [type, ArrayType] = NPY_TYPES[descr];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map((s) => s.trim())
      .filter((s) => s.length > 0).map((s) => parseInt(s, 10));
  const offset = start + headerLen;
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new ArrayType(count);
  const bytes = count * ArrayType.BYTES_PER_ELEMENT;
  if (buf.length < offset + bytes) throw new Error(`${file}: truncated`);
  Buffer.from(data.buffer).set(buf.subarray(offset, offset + bytes));
  return new ort.Tensor(type, data, shape);
}

// The feeds of `session` from the --input arguments ([NAME=]FILE; no name: the first input).
function readFeeds(session, inputs) {
  const feeds = {};
  for (const spec of inputs) {
    const eq = spec.indexOf('=');
    const name = eq >= 0 ? spec.slice(0, eq) : session.inputNames[0];
    if (!session.inputNames.includes(name)) {
      throw new Error(`--input ${spec}: the model has no input ${name} (${session.inputNames})`);
    }
    feeds[name] = readNpy(eq >= 0 ? spec.slice(eq + 1) : spec);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) throw new Error(`no --input for ${missing}`);
  return feeds;
}

function smapsRollup(pid) {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name) => {
    const m = text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));
    return m ? parseInt(m[1], 10) * 1024 : 0;
  };
  return { rss_bytes: field('Rss'), pss_bytes: field('Pss'), anon_bytes: field('Anonymous') };
}

function memory(step, sessions) {
  const u = process.memoryUsage();
  return {
    step, sessions, ...smapsRollup('self'),
    node_rss_bytes: u.rss, heap_used_bytes: u.heapUsed, external_bytes: u.external,
    array_buffers_bytes: u.arrayBuffers,
  };
}

function sessionOptions(args) {
  const o = {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', interOpNumThreads: 1,
    executionMode: 'sequential',
  };
  if (args.threads > 0) o.intraOpNumThreads = args.threads;
  return o;
}

async function timed(fn) {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)));
  return sorted[i];
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function runChild(args) {
  const [session, creation] = await timed(() => ort.InferenceSession.create(args.model, sessionOptions(args)));
  const feeds = readFeeds(session, args.inputs);
  const [, first] = await timed(() => session.run(feeds));
  process.stdout.write(JSON.stringify({ creation_ms: creation, first_inference_ms: first }) + '\n');
  // Stay alive (holding the session) until the parent closes our stdin.
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on('end', resolve));
  await session.release();
}

async function measureProcesses(args) {
  const children = [];
  for (let i = 0; i < args.processes; i++) {
    const child = spawn(process.execPath, [__filename, '--child', '--model', args.model,
      ...args.inputs.flatMap((i) => ['--input', i]), '--threads', String(args.threads)],
    { stdio: ['pipe', 'pipe', 'inherit'] });
    const report = new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
      });
      child.on('exit', (code) => reject(new Error(`child exited with ${code} before reporting`)));
    });
    children.push({ child, report });
  }
  const reports = [];
  for (const c of children) reports.push(await c.report);
  const result = { count: args.processes, rss_sum_bytes: 0, pss_sum_bytes: 0, anon_sum_bytes: 0, children: [] };
  children.forEach((c, i) => {
    const m = smapsRollup(c.child.pid);
    result.rss_sum_bytes += m.rss_bytes;
    result.pss_sum_bytes += m.pss_bytes;
    result.anon_sum_bytes += m.anon_bytes;
    result.children.push({ pid: c.child.pid, ...reports[i], memory: m });
  });
  await Promise.all(children.map((c) => new Promise((resolve) => {
    c.child.removeAllListeners('exit');
    c.child.on('exit', resolve);
    c.child.stdin.end();
  })));
  return result;
}

async function main() {
  const args = parseArgs(process.argv);
  if (args.child) return runChild(args);
  const result = {
    engine: 'onnxruntime-node', ort_version: ort.env.versions ? ort.env.versions.node : 'unknown',
    model: path.resolve(args.model), threads: args.threads, memory: [],
  };
  result.memory.push(memory('start', 0));

  const [first, firstCreation] = await timed(() => ort.InferenceSession.create(args.model, sessionOptions(args)));
  // Read after the creation (timed alone, as epctx perf does), before the first run.
  const feeds = readFeeds(first, args.inputs);
  result.memory.push(memory('session_1_created', 1));
  const [, firstInference] = await timed(() => first.run(feeds));
  result.first_inference_ms = firstInference;
  result.memory.push(memory('session_1_ran', 1));

  const latencies = [];
  for (let i = 0; i < args.runs; i++) latencies.push((await timed(() => first.run(feeds)))[1]);
  latencies.sort((a, b) => a - b);
  result.latency_ms = {
    mean: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99),
    min: latencies[0], max: latencies[latencies.length - 1],
  };

  const sessions = [first];
  const subsequent = [];
  for (let count = 2; count <= args.sessions; count++) {
    const [s, ms] = await timed(() => ort.InferenceSession.create(args.model, sessionOptions(args)));
    subsequent.push(ms);
    await s.run(feeds);
    sessions.push(s);
    const powerOf4 = (count & (count - 1)) === 0 && (count & 0x55555555) !== 0;
    if (powerOf4 || count === args.sessions) result.memory.push(memory(`sessions_${count}_ran`, count));
  }
  result.sessions = args.sessions;
  result.session_creation_ms = {
    first: firstCreation,
    subsequent_median: median(subsequent),
    min: Math.min(firstCreation, ...subsequent),
    max: Math.max(firstCreation, ...subsequent),
    subsequent,
  };
  for (const s of sessions) await s.release();
  if (args.processes > 0) result.processes = await measureProcesses(args);
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_bench: ${e.stack || e}\n`);
  process.exit(1);
});
