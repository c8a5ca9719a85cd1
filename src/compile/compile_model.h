// The compile pipeline: imported model -> passes -> program and weights in a blob writer.
#pragma once

#include <string>
#include <vector>

#include "compile/onnx_import.h"
#include "compile/passes/passes.h"
#include "compile/program_builder.h"
#include "epctx/compiler.h"
#include "epctx/status.h"
#include "format/blob_writer.h"
#include "util/aligned_buffer.h"

namespace epctx::compile {

struct CompiledModel {
  std::string partition_name;
  BuiltProgram program;
  std::vector<PassStats> passes;
};

// The fingerprint of what this process packs for: this build, and the kernel ISA oneDNN
// dispatches to (see exec/kernels/onednn/isa.h). Every blob writer of the compiler takes it.
format::TargetFingerprint PackingTarget();

// A compile's progress as the public CompileProgress says it, sent to a reporter (may be empty).
struct ProgressTracker {
  std::function<void(const CompileProgress&)> reporter;
  CompileProgress state;

  void Stage(std::string stage) {
    state.stage = std::move(stage);
    Send();
  }
  void Send() const {
    if (reporter) reporter(state);
  }
};

// Optimizes `model.graph` in place (the standard passes and those `passes` asks for) and adds its
// program and weights to `writer`. With
// `refuse_unsupported`, a graph with a node no kernel runs is refused (kernel_check.h) before
// anything is added. With a streaming writer the graph's weights are let go once written (the
// values keep their dtypes and shapes), so that a compile of several models holds none of them.
Result<CompiledModel> CompileIntoBlob(ImportedModel& model, const std::string& partition_name,
                                      format::BlobWriter& writer, bool refuse_unsupported,
                                      const PassOptions& passes,
                                      ProgressTracker* progress = nullptr);

// Import + compile into an in-memory blob holding one model named `partition_name`; the JIT path
// used when a session is created from an original model or falls back to it.
struct MemoryBlob {
  AlignedBuffer bytes;
  ImportedModel model;  // graph already optimized; source info and I/O declarations
};
Result<MemoryBlob> CompileFileToMemory(const std::string& model_path,
                                       const std::string& partition_name,
                                       const PassOptions& passes = {},
                                       const ImportOptions& import = {});
Result<MemoryBlob> CompileBytesToMemory(std::span<const std::byte> bytes, const std::string& name,
                                        const std::string& model_dir,
                                        const std::string& partition_name,
                                        const PassOptions& passes = {},
                                        const ImportOptions& import = {});

// The partition name a model gets in its blob: the model file's stem ("resnet50").
std::string PartitionNameFor(const std::string& model_path);

}  // namespace epctx::compile
