// The one place that turns a context model into what it references: its EPContext node (domain
// and attribute types checked by compile::ParseContextModel), the blob (a file inside the context
// model's folder, or bytes embedded in the node), the original model and the facts recorded to
// tell whether the blob is stale. Sessions, `epctx inspect` / `verify` and `epctx perf --cold`
// all resolve context models here, so one rule decides which files a context model may make
// epctx read.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compile/context_model.h"
#include "epctx/session.h"
#include "epctx/status.h"

namespace epctx::loader {

struct ReferencePolicy {
  // epctx.allow_external_paths: references may be absolute or climb out of the folder.
  bool allow_external_paths = false;
};

// A file the context model names, resolved against its folder.
struct Reference {
  std::string recorded;  // as the context model records it
  std::string path;      // resolved; empty when nothing is recorded or no folder is known
  // OK when the file may be read; otherwise why not (it lies outside the folder, or the context
  // model came from memory without a folder). A path that may not be read may still be stat()ed.
  Status readable;
};

struct ResolvedContextModel {
  compile::ContextModelInfo node;
  std::string name;  // the context model's path or description, for messages
  std::string dir;   // the folder references resolve against; empty when unknown
  Reference blob;    // not used when node.embed
  Reference original;
};

// nullopt when `bytes` hold an original model (no EPContext node). `dir` is the context model's
// folder (or ep.context_file_path's for a model from memory; empty when there is none, which
// only a context model with its blob embedded can do without: otherwise kInvalidArgument).
Result<std::optional<ResolvedContextModel>> ResolveContextModel(std::span<const std::byte> bytes,
                                                                const std::string& name,
                                                                const std::string& dir,
                                                                const ReferencePolicy& policy);

// The session's inputs and outputs against the graph inputs and outputs the context model
// declares: same count, names, types and known dims. kCorrupt when the pair does not match (a
// context model edited, or paired with another blob).
Status CheckDeclaredInterface(const ResolvedContextModel& ctx, const std::vector<ValueInfo>& inputs,
                              const std::vector<ValueInfo>& outputs);

// The blob against the identity the context model recorded (its header checksum, written into
// both at compile time): kStale when they differ or none is recorded. A compile killed between
// writing the blob and writing the context model leaves such a pair.
Status CheckBlobIdentity(const ResolvedContextModel& ctx, uint64_t blob_identity);

// The original model and its external data files against what the context model recorded, by
// size and mtime (their content hashes only with `hash`, which reads every file): kNotFound when
// there is none to compare (the model file, or one of its data files, is gone), kStale naming
// what differs.
Status CheckOriginalUnchanged(const ResolvedContextModel& ctx, bool hash = false);

}  // namespace epctx::loader
