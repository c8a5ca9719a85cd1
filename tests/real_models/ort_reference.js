// ONNX Runtime's outputs on seeded inputs, for check_real_models.py.
// usage: node ort_reference.js ORT_MODULE_DIR MODEL.onnx OUT_DIR SPEC_JSON
//   SPEC_JSON: {"inputs": {"name": [dims...]}, "int64_value": N, "values": {"name": [v...]}}
// Writes OUT_DIR/inputs/NAME.npy (float32 and float16 inputs uniform in [-1, 1) from a fixed
// seed; int64 and int32 inputs filled with int64_value; an input named in "values" holds those
// numbers, one per element; a float may be the string "NaN", "Infinity" or "-Infinity", which JSON
// has no number for) and OUT_DIR/ort/NAME.npy for every output, NAME escaped as fileName
// says.
'use strict';
const fs = require('fs');
const path = require('path');

const NPY = {
  float32: '<f4',
  float16: '<f2',
  int64: '<i8',
  int32: '<i4',
  uint8: '|u1',
  bool: '|b1'
};

// IEEE half-precision bits of a float, rounded to nearest even (Node 20 has no Float16Array).
function halfBits(value) {
  const f32 = new Float32Array([value]);
  const x = new Uint32Array(f32.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rest > mid || (rest === mid && (half & 1))) half += 1;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half += 1;
  return sign | half;
}

function writeNpy(file, tensor) {
  const descr = NPY[tensor.type];
  if (!descr) throw new Error(`${file}: no .npy type for ${tensor.type}`);
  const shape = tensor.dims.join(', ') + (tensor.dims.length === 1 ? ',' : '');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const d = tensor.data;
  fs.writeFileSync(file, Buffer.concat([
    prefix, Buffer.from(header, 'latin1'), Buffer.from(d.buffer, d.byteOffset, d.byteLength)
  ]));
}

// A tensor's file name as `epctx run --output-dir` writes it: every byte outside A-Z a-z 0-9 . _ -
// as %XX, and ".", ".." and "" escaped whole.
function fileName(name) {
  const special = {'': '%', '.': '%2E', '..': '%2E%2E'};
  if (name in special) return `${special[name]}.npy`;
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${out}.npy`;
}

async function main() {
  const [ortDir, model, outDir, specJson] = process.argv.slice(2);
  const ort = require(path.resolve(ortDir));
  const spec = JSON.parse(specJson);
  let seed = 20261124;
  const uniform = () => {  // a 31-bit LCG: the same inputs on every machine
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  // x64quantprecision: exact u8 x s8 products on CPUs without VNNI too (ORT's kernels there add
  // pairs of products in int16 and saturate otherwise; with VNNI the option changes nothing).
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
    extra: {session: {x64quantprecision: '1'}},
  });
  fs.mkdirSync(path.join(outDir, 'inputs'), {recursive: true});
  fs.mkdirSync(path.join(outDir, 'ort'), {recursive: true});
  const feeds = {};
  for (const meta of session.inputMetadata) {
    const dims = spec.inputs[meta.name];
    if (!dims) throw new Error(`${model}: models.json gives no shape for input ${meta.name}`);
    const count = dims.reduce((a, b) => a * b, 1);
    const given = (spec.values || {})[meta.name];
    if (given && given.length !== count) {
      throw new Error(
          `${model}: input ${meta.name} has ${count} elements, "values" gives ${given.length}`);
    }
    const value = (i) => (given ? given[i] : spec.int64_value);
    let tensor;
    if (meta.type === 'int64') {
      tensor = new ort.Tensor(
          'int64', BigInt64Array.from({length: count}, (_, i) => BigInt(value(i))), dims);
    } else if (meta.type === 'int32') {
      tensor = new ort.Tensor('int32', Int32Array.from({length: count}, (_, i) => value(i)), dims);
    } else if (meta.type === 'float32') {
      tensor = new ort.Tensor(
          'float32',
          Float32Array.from(
              {length: count}, (_, i) => (given ? Number(given[i]) : uniform() * 2 - 1)),
          dims);
    } else if (meta.type === 'float16') {
      tensor = new ort.Tensor(
          'float16',
          Uint16Array.from(
              {length: count}, (_, i) => halfBits(given ? Number(given[i]) : uniform() * 2 - 1)),
          dims);
    } else {
      throw new Error(`${model}: input ${meta.name} has type ${meta.type}, not generated here`);
    }
    feeds[meta.name] = tensor;
    writeNpy(path.join(outDir, 'inputs', fileName(meta.name)), tensor);
  }
  const results = await session.run(feeds);
  for (const [name, tensor] of Object.entries(results)) {
    writeNpy(path.join(outDir, 'ort', fileName(name)), tensor);
  }
}

main().catch((e) => {
  console.error(`ort_reference: ${e.message}`);
  process.exit(1);
});
