// Original models -> NAME_ctx.onnx + blob on disk, one model at a time, several into one shared
// blob, or several across calls with ep.share_ep_contexts (ModelCompiler's work).
#include "compile/context_compiler.h"
#include "exec/kernels/epctx_ops.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "compile/context_model.h"
#include "epctx/compiler.h"
#include "exec/kernels/onednn/isa.h"
#include "format/blob_layout.h"
#include "format/target.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

PassOptions PassOptionsOf(const CompileOptions& opts) {
  return PassOptions{.compute_bf16 = opts.compute_bf16};
}

// How a model given as bytes is named in messages, as Session::CreateFromMemory names it.
constexpr const char* kModelInMemory = "<model in memory>";

compile::ContextModelSpec SpecFor(const compile::ImportedModel& model, const std::string& partition,
                                  const std::string& context_model_path, const CompileOptions& opts,
                                  bool main_context) {
  compile::ContextModelSpec spec;
  spec.graph_name = model.graph.name;
  spec.partition_name = partition;
  spec.node_name = opts.node_name_prefix + partition + "_ctx";
  spec.main_context = main_context;
  spec.embed = opts.embed_mode;
  spec.hardware_architecture = format::HardwareArchitecture(compile::PackingTarget());
  spec.ir_version = std::max<int64_t>(model.ir_version, 7);
  spec.opsets = model.graph.opsets;
  spec.opsets.erase(std::string(ops::kDomain));
  spec.input_value_infos = model.input_value_infos;
  spec.output_value_infos = model.output_value_infos;
  // A model compiled from bytes has no file to fall back to, and a context model returned as bytes
  // without ep.context_file_path has no known folder to record the original relative to.
  if (!model.source.path.empty() && !context_model_path.empty()) {
    spec.original_path = RelativePath(model.source.path, DirName(context_model_path));
  }
  spec.original_size = model.source.size;
  spec.original_mtime_ns = model.source.mtime_ns;
  spec.original_hash = model.source.hash;
  spec.original_external_data = model.source.external_data;
  spec.domain = model.description.domain;
  spec.model_version = model.description.model_version;
  spec.doc_string = model.description.doc_string;
  spec.graph_doc_string = model.description.graph_doc_string;
  spec.original_metadata_props = model.description.metadata_props;
  return spec;
}

// Loads read only files inside the context model's folder unless epctx.allow_external_paths=1:
// say so when the context model names one outside.
void WarnAboutOutsideReferences(const compile::ContextModelSpec& spec,
                                const std::string& context_model_path,
                                std::vector<std::string>& warnings) {
  auto warn = [&](const char* what, const std::string& reference) {
    if (reference.empty() || StaysInsideFolder(reference)) return;
    warnings.push_back(
        fmt::format("'{}' names the {} '{}', outside its folder: loads read it only with "
                    "epctx.allow_external_paths=1",
                    context_model_path, what, reference));
    Logger().warn("{}", warnings.back());
  };
  if (!spec.embed) warn("blob", spec.blob_reference);
  warn("original model", spec.original_path);
}

uint64_t IdentityOf(const AlignedBuffer& blob) {
  format::BlobHeader header;
  std::memcpy(&header, blob.data(), sizeof header);
  return header.header_checksum;
}

Status CheckContextModelPath(const std::string& path) {
  if (path.empty())
    return EPCTX_ERROR(kInvalidArgument, "no output path given for the context model");
  EPCTX_RETURN_IF_ERROR(CheckPath(path, "context model path"));
  if (std::filesystem::path(path).filename().empty()) {
    return EPCTX_ERROR(kInvalidArgument, "'{}': the context model path names a directory", path);
  }
  return Status::Ok();
}

// A file the compile writes that is a model it reads, or another file it writes, would be
// overwritten by the compile itself: refused before anything is written.
Status CheckWritesAnInput(const std::string& output, const std::string& what,
                          const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    if (!input.empty() && SameFile(output, input)) {
      return EPCTX_ERROR(kInvalidArgument,
                         "'{}': the {} would overwrite the model '{}', which this compile reads; "
                         "choose another output",
                         output, what, input);
    }
  }
  return Status::Ok();
}

// The blob is named after the context model: a context model named NAME.epctx would be its own
// blob.
Status CheckBlobApart(const std::string& context_model, const std::string& blob) {
  if (!SameFile(context_model, blob)) return Status::Ok();
  return EPCTX_ERROR(kInvalidArgument,
                     "'{}': the context model and its blob would be one file (the blob takes "
                     "the context model's name with the extension .epctx); name the context "
                     "model NAME_ctx.onnx",
                     context_model);
}

uint64_t WeightBytesOf(const compile::IrGraph& graph) {
  uint64_t total = 0;
  for (const compile::IrValue& v : graph.values) {
    if (v.constant) total += v.constant->bytes.size();
  }
  return total;
}

// Models compiled with ep.share_ep_contexts=1 that wait for the call with
// ep.stop_share_ep_contexts=1, which writes their blob. One group per process at a time.
struct SharedGroup {
  std::mutex mutex;
  bool open = false;
  format::BlobWriter writer;
  std::string blob_path;
  std::map<std::string, int> partition_uses;
  // The context models written so far: each is written again, with the blob's identity, once
  // the blob exists.
  std::vector<std::pair<std::string, compile::ContextModelSpec>> members;
};

SharedGroup& Group() {
  static SharedGroup* group = new SharedGroup();
  return *group;
}

std::string UniquePartition(std::map<std::string, int>& uses, const std::string& stem) {
  int& n = uses[stem];
  std::string name = n == 0 ? stem : stem + "_" + std::to_string(n);
  ++n;
  // A later model may be literally named like an earlier suffixed one ("model_1").
  while (n > 1 && uses.count(name) && name != stem) {
    name = stem + "_" + std::to_string(n++);
  }
  if (name != stem) uses[name]++;
  return name;
}

Status Deliver(const CompileOutput& out, std::string ctx_bytes) {
  if (out.bytes != nullptr) {
    *out.bytes = std::move(ctx_bytes);
    return Status::Ok();
  }
  return WriteFileAtomically(out.location, std::as_bytes(std::span(ctx_bytes)));
}

Result<CompileReport> CompileShared(const CompileOptions& opts, const CompileInput& input,
                                    const CompileOutput& out, ProgressTracker& progress) {
  if (opts.embed_mode) {
    return EPCTX_ERROR(kInvalidArgument,
                       "ep.context_embed_mode=1 cannot be combined with "
                       "ep.share_ep_contexts: the shared blob is written by the last call");
  }
  if (out.bytes != nullptr) {
    return EPCTX_ERROR(kInvalidArgument,
                       "ep.share_ep_contexts needs the context models written to files: each "
                       "records the shared blob's identity, known only when the last model "
                       "(ep.stop_share_ep_contexts) writes the blob, and is then rewritten");
  }
  SharedGroup& group = Group();
  std::lock_guard<std::mutex> lock(group.mutex);
  const std::string blob_path = group.open ? group.blob_path : SharedBlobPathFor(out.location);
  EPCTX_RETURN_IF_ERROR(CheckBlobApart(out.location, blob_path));
  EPCTX_RETURN_IF_ERROR(CheckWritesAnInput(blob_path, "shared blob", {input.path}));
  progress.Stage("importing");
  EPCTX_ASSIGN_OR_RETURN(compile::ImportedModel model, input.Import(opts));
  if (!group.open) {
    // The group's weights stream into the blob's temporary file, call after call.
    group.blob_path = blob_path;
    EPCTX_ASSIGN_OR_RETURN(group.writer,
                           format::BlobWriter::ToFile(compile::PackingTarget(), group.blob_path));
    group.partition_uses.clear();
    group.members.clear();
  }
  bool main_context = !group.open;
  std::string partition = UniquePartition(group.partition_uses, input.PartitionStem(out.location));
  EPCTX_ASSIGN_OR_RETURN(
      compile::CompiledModel compiled,
      compile::CompileIntoBlob(model, partition, group.writer, !opts.allow_unsupported,
                               PassOptionsOf(opts), &progress));
  group.open = true;
  compile::ContextModelSpec spec = SpecFor(model, partition, out.location, opts, main_context);
  spec.blob_reference = RelativePath(group.blob_path, DirName(out.location));
  EPCTX_ASSIGN_OR_RETURN(std::string ctx_bytes, compile::SerializeContextModel(spec));
  EPCTX_RETURN_IF_ERROR(Deliver(out, std::move(ctx_bytes)));
  CompileReport report;
  WarnAboutOutsideReferences(spec, out.location, report.warnings);
  report.context_model_path = out.location;
  report.blob_path = group.blob_path;
  report.node_count = compiled.program.node_count;
  report.weight_bytes = group.writer.unique_weight_bytes();
  report.weight_count = group.writer.weight_count();
  report.blob_pending = !opts.stop_share_ep_contexts;
  group.members.emplace_back(out.location, std::move(spec));
  if (opts.stop_share_ep_contexts) {
    group.open = false;
    uint64_t identity = 0;
    progress.Stage("finishing");
    EPCTX_RETURN_IF_ERROR(group.writer.Finish(&identity));
    EPCTX_ASSIGN_OR_RETURN(FileIdentity id, StatFile(group.blob_path));
    report.blob_size = id.size;
    for (auto& [path, member] : group.members) {
      member.blob_identity = identity;
      EPCTX_ASSIGN_OR_RETURN(std::string bytes, compile::SerializeContextModel(member));
      EPCTX_RETURN_IF_ERROR(WriteFileAtomically(path, std::as_bytes(std::span(bytes))));
    }
    group.members.clear();
  }
  return report;
}

// epctx.target_isa other than native limits oneDNN to that tier for the rest of the process.
Status ApplyTargetIsa(const CompileOptions& opts) {
  if (opts.target_isa == "native") return Status::Ok();
  EPCTX_ASSIGN_OR_RETURN(format::KernelIsa isa, format::ParseKernelIsa(opts.target_isa));
  return exec::kernels::onednn::LimitKernelIsa(isa);
}

}  // namespace

Result<ImportedModel> CompileInput::Import(const CompileOptions& opts) const {
  if (!path.empty()) return ImportModelFile(path, opts.import);
  return ImportModelBytes(bytes, kModelInMemory, opts.external_data_folder, opts.import);
}

std::string CompileInput::PartitionStem(const std::string& context_location) const {
  if (!path.empty()) return PartitionNameFor(path);
  if (context_location.empty()) return "model";
  std::string stem = PartitionNameFor(context_location);
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, "_ctx") == 0)
    stem.resize(stem.size() - 4);
  return stem;
}

Result<CompileReport> CompileToContextModel(
    const CompileOptions& opts, const CompileInput& input, CompileOutput out,
    const std::function<void(const CompileProgress&)>& reporter) {
  EPCTX_RETURN_IF_ERROR(ApplyTargetIsa(opts));
  // Bytes go where the caller will save them, which only ep.context_file_path can say.
  if (out.bytes != nullptr) out.location = opts.context_file_path;
  if (out.bytes == nullptr || !out.location.empty()) {
    EPCTX_RETURN_IF_ERROR(CheckContextModelPath(out.location));
  } else if (!opts.embed_mode || opts.share_ep_contexts || opts.stop_share_ep_contexts) {
    return EPCTX_ERROR(kInvalidArgument,
                       "compiling to bytes writes the blob beside the context model: set "
                       "ep.context_file_path to where the context model will be saved, or "
                       "ep.context_embed_mode=1 to put the blob inside it");
  }
  if (!out.location.empty()) {
    EPCTX_RETURN_IF_ERROR(CheckWritesAnInput(out.location, "context model", {input.path}));
  }
  ProgressTracker progress{reporter, {}};
  progress.state.model = input.path.empty() ? kModelInMemory : input.path;
  if (opts.share_ep_contexts || opts.stop_share_ep_contexts) {
    return CompileShared(opts, input, out, progress);
  }

  progress.Stage("importing");
  EPCTX_ASSIGN_OR_RETURN(compile::ImportedModel model, input.Import(opts));
  std::string partition = input.PartitionStem(out.location);
  // A blob file is written as the weights come (one weight in memory at a time); an embedded blob
  // is built in memory, where it ends up anyway.
  const std::string blob_path = opts.embed_mode ? "" : DefaultBlobPathFor(out.location);
  format::BlobWriter writer(compile::PackingTarget());
  if (!opts.embed_mode) {
    EPCTX_RETURN_IF_ERROR(CheckBlobApart(out.location, blob_path));
    EPCTX_RETURN_IF_ERROR(CheckWritesAnInput(blob_path, "blob", {input.path}));
    EPCTX_ASSIGN_OR_RETURN(writer, format::BlobWriter::ToFile(compile::PackingTarget(), blob_path));
  }
  EPCTX_ASSIGN_OR_RETURN(compile::CompiledModel compiled,
                         compile::CompileIntoBlob(model, partition, writer, !opts.allow_unsupported,
                                                  PassOptionsOf(opts), &progress));

  CompileReport report;
  report.context_model_path = out.location;
  report.weight_bytes = writer.unique_weight_bytes();
  report.weight_count = writer.weight_count();
  report.node_count = compiled.program.node_count;

  compile::ContextModelSpec spec = SpecFor(model, partition, out.location, opts, true);
  AlignedBuffer embedded;
  // The blob first: the context model records its identity. A compile killed between the two
  // renames leaves the old context model beside the new blob, which loads then refuse to pair.
  progress.Stage("finishing");
  if (opts.embed_mode) {
    EPCTX_ASSIGN_OR_RETURN(embedded, writer.WriteToMemory());
    spec.embedded_blob = embedded.bytes();
    spec.blob_identity = IdentityOf(embedded);
    report.blob_size = embedded.size();
  } else {
    spec.blob_reference = BaseName(blob_path);
    EPCTX_RETURN_IF_ERROR(writer.Finish(&spec.blob_identity));
    EPCTX_ASSIGN_OR_RETURN(FileIdentity blob_id, StatFile(blob_path));
    report.blob_size = blob_id.size;
    report.blob_path = blob_path;
  }
  WarnAboutOutsideReferences(spec, out.location, report.warnings);
  auto ctx_bytes = compile::SerializeContextModel(spec);
  Status delivered = ctx_bytes.ok() ? Deliver(out, std::move(*ctx_bytes)) : ctx_bytes.status();
  if (!delivered.ok()) {
    // Leave no blob without its context model.
    if (!blob_path.empty()) ::unlink(blob_path.c_str());
    return delivered;
  }
  return report;
}

Result<MultiCompileReport> CompileModelsIntoOneBlob(
    const CompileOptions& opts, const std::vector<std::string>& model_paths,
    const std::string& output_dir, const std::function<void(const std::string&)>& progress,
    const std::function<void(const CompileProgress&)>& reporter) {
  if (model_paths.empty()) return EPCTX_ERROR(kInvalidArgument, "no models to compile");
  EPCTX_RETURN_IF_ERROR(ApplyTargetIsa(opts));
  if (opts.share_ep_contexts || opts.stop_share_ep_contexts) {
    return EPCTX_ERROR(kInvalidArgument,
                       "ep.share_ep_contexts and ep.stop_share_ep_contexts are "
                       "for one-model-per-call compiles; several models in one call always "
                       "share one blob");
  }
  // Every model's partition name (its stem, made unique) and so its context model's path, known
  // before anything is written, so that no output lands on an input.
  std::map<std::string, int> partition_uses;
  std::vector<std::string> partitions;
  for (const std::string& path : model_paths) {
    partitions.push_back(UniquePartition(partition_uses, compile::PartitionNameFor(path)));
  }
  auto context_model_path = [&](size_t i) {
    return JoinPath(output_dir, compile::ContextModelFileName(partitions[i]));
  };
  // Every model's weights stream into the shared blob's temporary file as they are compiled (one
  // weight in memory at a time); it is published only when all compiled. An embedded blob is
  // built in memory, where it ends up anyway.
  // Named after the first model's context model (its partition name is its stem: none is taken).
  const std::string blob_path = SharedBlobPathFor(context_model_path(0));
  for (size_t i = 0; i < model_paths.size(); ++i) {
    EPCTX_RETURN_IF_ERROR(CheckWritesAnInput(
        context_model_path(i), fmt::format("context model of '{}'", model_paths[i]), model_paths));
  }
  if (!opts.embed_mode) {
    EPCTX_RETURN_IF_ERROR(CheckWritesAnInput(blob_path, "shared blob", model_paths));
  }
  EPCTX_RETURN_IF_ERROR(CreateDirectories(output_dir));
  auto say = [&progress](const std::string& message) {
    if (progress) progress(message);
  };

  MultiCompileReport report;
  format::BlobWriter writer(compile::PackingTarget());
  if (!opts.embed_mode) {
    EPCTX_ASSIGN_OR_RETURN(writer, format::BlobWriter::ToFile(compile::PackingTarget(), blob_path));
  }
  ProgressTracker tracker{reporter, {}};
  tracker.state.model_count = model_paths.size();
  std::vector<compile::ImportedModel> models;
  std::vector<std::string> specs_partition;
  bool all_ok = true;
  size_t n = model_paths.size();
  for (size_t i = 0; i < n; ++i) {
    ModelCompileResult r;
    r.model_path = model_paths[i];
    std::string stem = compile::PartitionNameFor(model_paths[i]);
    r.partition_name = partitions[i];
    r.context_model_path = context_model_path(i);
    if (r.partition_name != stem) {
      r.warnings.push_back(fmt::format("another model is also named '{}': '{}' is written as '{}'",
                                       stem, model_paths[i], r.context_model_path));
      Logger().warn("{}", r.warnings.back());
    }
    say(fmt::format("[{}/{}] compiling '{}'", i + 1, n, model_paths[i]));
    tracker.state.model = model_paths[i];
    tracker.state.model_index = i;
    tracker.state.weights_done = tracker.state.weights_total = 0;
    tracker.Stage("importing");
    auto imported = compile::ImportModelFile(model_paths[i], opts.import);
    if (imported.ok()) {
      r.weight_bytes = WeightBytesOf(imported->graph);
      auto compiled =
          compile::CompileIntoBlob(*imported, r.partition_name, writer, !opts.allow_unsupported,
                                   PassOptionsOf(opts), &tracker);
      if (compiled.ok()) {
        r.compiled = true;
        r.node_count = compiled->program.node_count;
        say(fmt::format("[{}/{}] '{}': {} nodes, {} weight bytes", i + 1, n, model_paths[i],
                        r.node_count, r.weight_bytes));
      } else {
        r.error = compiled.status().ToString();
        r.error_code = compiled.status().code();
      }
      models.push_back(std::move(imported).value());
    } else {
      r.error = imported.status().ToString();
      r.error_code = imported.status().code();
      models.emplace_back();
    }
    if (!r.compiled) {
      all_ok = false;
      say(fmt::format("[{}/{}] '{}' failed: {}", i + 1, n, model_paths[i], r.error));
    }
    report.models.push_back(std::move(r));
  }
  report.weight_bytes = writer.unique_weight_bytes();
  report.weight_count = writer.weight_count();
  report.dedup_hits = writer.dedup_hits();
  if (!all_ok) return report;

  // Everything compiled: write the blob, then the context models; undo all on any failure.
  tracker.Stage("finishing");
  AlignedBuffer embedded;
  std::vector<std::string> written;
  auto undo = [&]() {
    for (const std::string& p : written) ::unlink(p.c_str());
  };
  uint64_t identity = 0;
  if (opts.embed_mode) {
    EPCTX_ASSIGN_OR_RETURN(embedded, writer.WriteToMemory());
    identity = IdentityOf(embedded);
    report.blob_size = embedded.size();
  } else {
    say(fmt::format("writing shared blob '{}'", blob_path));
    EPCTX_RETURN_IF_ERROR(writer.Finish(&identity));
    written.push_back(blob_path);
    EPCTX_ASSIGN_OR_RETURN(FileIdentity id, StatFile(blob_path));
    report.blob_size = id.size;
    report.blob_path = blob_path;
  }
  for (size_t i = 0; i < n; ++i) {
    ModelCompileResult& r = report.models[i];
    compile::ContextModelSpec spec =
        SpecFor(models[i], r.partition_name, r.context_model_path, opts, i == 0);
    spec.blob_identity = identity;
    if (opts.embed_mode) {
      spec.embedded_blob = embedded.bytes();
    } else {
      spec.blob_reference = RelativePath(blob_path, DirName(r.context_model_path));
    }
    WarnAboutOutsideReferences(spec, r.context_model_path, r.warnings);
    auto bytes = compile::SerializeContextModel(spec);
    Status s = bytes.ok()
                   ? WriteFileAtomically(r.context_model_path, std::as_bytes(std::span(*bytes)))
                   : bytes.status();
    if (!s.ok()) {
      undo();
      r.compiled = false;
      r.error = s.ToString();
      r.error_code = s.code();
      return report;
    }
    written.push_back(r.context_model_path);
  }
  report.written = true;
  return report;
}

}  // namespace epctx::compile

namespace epctx {

std::string DefaultContextModelPathFor(const std::string& model_path,
                                       const std::string& output_dir) {
  std::string dir = output_dir.empty() ? DirName(model_path) : output_dir;
  return JoinPath(dir, compile::ContextModelFileName(compile::PartitionNameFor(model_path)));
}

std::string DefaultBlobPathFor(const std::string& context_model_path) {
  std::filesystem::path p(context_model_path);
  return (p.parent_path() / (p.stem().string() + ".epctx")).string();
}

std::string SharedBlobPathFor(const std::string& first_context_model) {
  std::filesystem::path p(first_context_model);
  std::string stem = p.stem().string();
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, "_ctx") == 0)
    stem.resize(stem.size() - 4);
  return (p.parent_path() / (stem + "_shared.epctx")).string();
}

}  // namespace epctx
