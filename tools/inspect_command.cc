// `epctx inspect MODEL_ctx.onnx | BLOB.epctx [--json]`: what a context model points at and what
// its blob holds (target, sections, weights, and per program its nodes, values, arena and ops),
// without creating a session. A blob for another CPU or build can be inspected too.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "epctx/inspect.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct InspectArgs {
  std::string path;
  bool json = false;
};

// "Conv 53, Add 16, ..." with the most frequent ops first.
std::string OpList(const std::map<std::string, size_t>& counts) {
  std::vector<std::pair<std::string, size_t>> ops(counts.begin(), counts.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [op, count] : ops) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", op, count);
  }
  return out;
}

// Why a load cannot use the blob here: the context model's tie to it first, then its target.
// Empty when it can.
std::string UsableHereMismatch(const InspectReport& r) {
  std::string why = r.context ? r.context->blob_mismatch : "";
  if (!r.blob.target_mismatch.empty()) {
    why += (why.empty() ? "" : "; ") + r.blob.target_mismatch;
  }
  return why;
}

void PrintText(const InspectReport& r) {
  if (r.context) {
    const EpContextInfo& c = *r.context;
    std::printf("context model:  %s\n", c.context_model_path.c_str());
    std::printf("  EPContext:    node '%s', partition '%s'\n", c.node_name.c_str(),
                c.partition_name.c_str());
    std::printf("  blob:         %s\n", c.embedded ? "embedded" : c.blob_path.c_str());
    if (c.original_model_path.empty()) {
      std::printf("  original:     not recorded\n");
    } else {
      std::printf("  original:     %s (%s recorded)\n", c.original_model_path.c_str(),
                  c.original_size ? FormatBytes(*c.original_size).c_str() : "size not");
    }
  }
  const BlobInfo& b = r.blob;
  std::printf("blob:           %s, %s\n", b.name.c_str(), FormatBytes(b.file_size).c_str());
  std::printf("  format:       version %u, written by epctx %s\n", b.format_version,
              b.engine_version.c_str());
  std::printf("  target:       %s, packing build %s, layout version %u\n",
              b.hardware_architecture.c_str(), b.packing_build_id.c_str(), b.pack_layout_version);
  const std::string mismatch = UsableHereMismatch(r);
  if (mismatch.empty()) {
    std::printf("  usable here:  yes\n");
  } else {
    std::printf("  usable here:  no: %s\n", mismatch.c_str());
  }
  for (const BlobSectionInfo& s : b.sections) {
    std::printf("  section:      %-8s at %llu, %s\n", s.name.c_str(),
                static_cast<unsigned long long>(s.offset), FormatBytes(s.size).c_str());
  }
  std::string layouts;
  for (const auto& [layout, count] : b.weights_per_layout) {
    layouts += fmt::format("{}layout {}: {}", layouts.empty() ? "" : ", ", layout, count);
  }
  std::printf("  weights:      %zu tensors, %s (%s)\n", b.weight_count,
              FormatBytes(b.weight_bytes).c_str(), layouts.c_str());
  for (const BlobModelInfo& m : b.models) {
    std::printf("model '%s': %zu program%s, original %s, hash %016llx\n", m.name.c_str(),
                m.programs.size(), m.programs.size() == 1 ? "" : "s",
                FormatBytes(m.source_size).c_str(), static_cast<unsigned long long>(m.source_hash));
    for (size_t i = 0; i < m.programs.size(); ++i) {
      const ProgramInfo& p = m.programs[i];
      std::printf(
          "  program %zu%s '%s': %zu nodes, %zu values (%zu weights), %zu inputs, %zu outputs, "
          "arena %s\n",
          i, i == 0 ? " (main)" : " (body)", p.name.c_str(), p.node_count, p.value_count,
          p.weight_values, p.input_count, p.output_count, FormatBytes(p.arena_bytes).c_str());
      std::printf("    ops: %s\n", OpList(p.op_counts).c_str());
    }
  }
}

nlohmann::json ToJson(const InspectReport& r) {
  nlohmann::json j;
  if (r.context) {
    const EpContextInfo& c = *r.context;
    j["context_model"] = {
        {"path", c.context_model_path},       {"node_name", c.node_name},
        {"partition_name", c.partition_name}, {"embedded", c.embedded},
        {"blob_path", c.blob_path},           {"original_model_path", c.original_model_path}};
    if (c.original_size) j["context_model"]["original_size"] = *c.original_size;
    j["context_model"]["blob_mismatch"] = c.blob_mismatch;
  }
  const BlobInfo& b = r.blob;
  nlohmann::json blob = {{"name", b.name},
                         {"file_size", b.file_size},
                         {"format_version", b.format_version},
                         {"engine_version", b.engine_version},
                         {"hardware_architecture", b.hardware_architecture},
                         {"packing_build_id", b.packing_build_id},
                         {"pack_layout_version", b.pack_layout_version},
                         {"usable_here", UsableHereMismatch(r).empty()},
                         {"target_mismatch", b.target_mismatch},
                         {"weight_count", b.weight_count},
                         {"weight_bytes", b.weight_bytes}};
  blob["sections"] = nlohmann::json::array();
  for (const BlobSectionInfo& s : b.sections) {
    blob["sections"].push_back({{"name", s.name}, {"offset", s.offset}, {"size", s.size}});
  }
  for (const auto& [layout, count] : b.weights_per_layout) {
    blob["weights_per_layout"][std::to_string(layout)] = count;
  }
  blob["models"] = nlohmann::json::array();
  for (const BlobModelInfo& m : b.models) {
    nlohmann::json model = {{"name", m.name},
                            {"source_size", m.source_size},
                            {"source_hash", fmt::format("{:016x}", m.source_hash)}};
    model["programs"] = nlohmann::json::array();
    for (const ProgramInfo& p : m.programs) {
      model["programs"].push_back({{"name", p.name},
                                   {"nodes", p.node_count},
                                   {"values", p.value_count},
                                   {"weight_values", p.weight_values},
                                   {"inputs", p.input_count},
                                   {"outputs", p.output_count},
                                   {"arena_bytes", p.arena_bytes},
                                   {"ops", p.op_counts}});
    }
    blob["models"].push_back(std::move(model));
  }
  j["blob"] = std::move(blob);
  return j;
}

Status RunInspect(const InspectArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(InspectReport report, InspectModel(args.path));
  if (args.json) {
    std::printf(
        "%s\n",
        ToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    PrintText(report);
  }
  return Status::Ok();
}

}  // namespace

Command AddInspectCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* app = parent.add_subcommand(
      "inspect",
      "Show what a context model points at and what its blob holds: target, sections, weights, "
      "and per program its nodes, values, arena size and ops. Reads blobs made for other CPUs "
      "or builds too; does not create a session");
  app->add_option("model", args->path, "A context model (NAME_ctx.onnx) or a blob file")
      ->required();
  app->add_flag("--json", args->json, "Print one JSON document instead of text");
  return Command{app, [args]() { return RunInspect(*args); }};
}

}  // namespace epctx::cli
