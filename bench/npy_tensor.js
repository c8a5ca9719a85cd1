// A NumPy .npy file (float32, int32 or int64, little-endian, C order) as an onnxruntime-node
// Tensor: the inputs the bench's Node scripts feed ONNX Runtime.
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  const descr = /'descr': '([^']+)'/.exec(header)[1];
  const shape = /'shape': \(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
                    .filter((s) => s.length > 0).map(Number);
  const raw = buf.subarray(10 + headerLen);
  const bytes = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  const types = {'<f4': ['float32', Float32Array], '<i4': ['int32', Int32Array],
                 '<i8': ['int64', BigInt64Array]};
  if (!types[descr]) throw new Error(`${file}: unsupported dtype ${descr}`);
  const [type, Ctor] = types[descr];
  return new ort.Tensor(type, new Ctor(bytes), shape);
}

module.exports = {readNpy};
