// Corrections to ONNX 1.12's shape inference (Debian's libonnx), installed into its operator
// registry before the first import: where its inference function for an operator is wrong, one
// written from the operator's specification replaces it, so the import neither refuses valid
// models nor records wrong shapes.
#pragma once

namespace epctx::compile {

// Replaces:
//  - STFT-17: onnx 1.12 counts frames from the onesided bin count instead of the frame length
//    (16400 samples, frame 400, step 160 gave 102 frames, not 101), and refuses a frame_length
//    given together with a window. Ours: [batch, (length - frame) / step + 1, onesided ?
//    frame / 2 + 1 : frame, 2], checking step > 0, frame > 0, frame <= length, that the window
//    and frame_length agree, and that a onesided transform has a real signal.
//  - Conv, ConvInteger, QLinearConv and ConvTranspose (every version): onnx 1.12 reads the
//    weight's dims and indexes the input's with them without checking the ranks (a weight of
//    another rank crashed the process). Ours refuses a weight whose rank differs from the
//    input's, then runs onnx's.
//  - RNN, GRU and LSTM (every version): onnx 1.12's inference for the versions before 7 reads the
//    input's first two dims without checking its rank (an input of rank 1 crashed the process).
//    Ours refuses an input whose rank is not 3, then runs onnx's.
//  - MaxPool and AveragePool from version 10, in ceil mode: onnx 1.12 keeps a last window that
//    would start in the end padding; PyTorch, ONNX Runtime and our kernels drop it. Ours runs
//    onnx's, then drops it.
//  - The data propagation of every ONNX operator that has one: onnx 1.12's read the first
//    input's type without checking that there is one (Shape of a value whose inference failed
//    crashed the process). Ours skips propagation when that input (any input of a Concat) has
//    no type.
// Idempotent and safe to call from several threads.
void InstallShapeInferenceFixes();

}  // namespace epctx::compile
