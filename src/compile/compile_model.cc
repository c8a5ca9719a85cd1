#include "compile/compile_model.h"

#include <filesystem>

#include "compile/kernel_check.h"
#include "exec/kernels/onednn/isa.h"
#include "format/target.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {

format::TargetFingerprint PackingTarget() {
  return format::CurrentTarget(exec::kernels::onednn::PackingIsa());
}

namespace {

void DropConstants(IrGraph& graph) {
  for (IrValue& v : graph.values) v.constant.reset();
  for (IrNode& n : graph.nodes) {
    for (IrAttribute& a : n.attrs) {
      a.tensor.reset();
      if (a.body) DropConstants(*a.body);
    }
  }
}

}  // namespace

Result<CompiledModel> CompileIntoBlob(ImportedModel& model, const std::string& partition_name,
                                      format::BlobWriter& writer, bool refuse_unsupported,
                                      const PassOptions& passes, ProgressTracker* progress) {
  ProgressTracker none;
  ProgressTracker& p = progress != nullptr ? *progress : none;
  CompiledModel out;
  out.partition_name = partition_name;
  p.Stage("optimizing");
  EPCTX_ASSIGN_OR_RETURN(out.passes, RunAllPasses(model.graph, passes));
  for (const PassStats& s : out.passes) {
    Logger().debug("{}: pass {} changed {} nodes", partition_name, s.pass, s.changed);
  }
  if (refuse_unsupported) {
    EPCTX_RETURN_IF_ERROR(CheckEveryNodeRuns(
        model.graph, model.source.path.empty() ? partition_name : model.source.path));
  }
  p.state.weights_done = 0;
  p.state.weights_total = CountProgramWeights(model.graph);
  p.state.bytes_written = writer.bytes_written();
  p.Stage("writing weights");
  EPCTX_ASSIGN_OR_RETURN(out.program, BuildProgram(model.graph, writer, [&p, &writer] {
                           ++p.state.weights_done;
                           p.state.bytes_written = writer.bytes_written();
                           p.Send();
                         }));
  EPCTX_RETURN_IF_ERROR(
      writer.AddModel(partition_name, out.program.programs, model.source.size, model.source.hash));
  if (writer.streaming()) DropConstants(model.graph);
  return out;
}

namespace {

Result<MemoryBlob> Finish(ImportedModel model, const std::string& partition_name,
                          const PassOptions& passes) {
  format::BlobWriter writer(PackingTarget());
  // A session made from an original model fails on the node itself when it binds.
  EPCTX_RETURN_IF_ERROR(CompileIntoBlob(model, partition_name, writer, false, passes).status());
  EPCTX_ASSIGN_OR_RETURN(AlignedBuffer bytes, writer.WriteToMemory());
  return MemoryBlob{std::move(bytes), std::move(model)};
}

}  // namespace

Result<MemoryBlob> CompileFileToMemory(const std::string& model_path,
                                       const std::string& partition_name, const PassOptions& passes,
                                       const ImportOptions& import) {
  EPCTX_ASSIGN_OR_RETURN(ImportedModel model, ImportModelFile(model_path, import));
  return Finish(std::move(model), partition_name, passes);
}

Result<MemoryBlob> CompileBytesToMemory(std::span<const std::byte> bytes, const std::string& name,
                                        const std::string& model_dir,
                                        const std::string& partition_name,
                                        const PassOptions& passes, const ImportOptions& import) {
  EPCTX_ASSIGN_OR_RETURN(ImportedModel model, ImportModelBytes(bytes, name, model_dir, import));
  return Finish(std::move(model), partition_name, passes);
}

std::string PartitionNameFor(const std::string& model_path) {
  std::string stem = std::filesystem::path(model_path).stem().string();
  return stem.empty() ? "model" : stem;
}

}  // namespace epctx::compile
