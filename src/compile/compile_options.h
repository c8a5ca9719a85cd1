// The options a compile reads (context model and blob placement, sharing, target tier), with the
// keys that set them. Session creation owns the other keys (loader/engine_options.h) and parses
// these with its own.
#pragma once

#include <string>
#include <vector>

#include "compile/import_options.h"
#include "util/option_table.h"

namespace epctx::compile {

struct CompileOptions {
  std::string context_file_path;        // ep.context_file_path
  bool embed_mode = false;              // ep.context_embed_mode
  std::string node_name_prefix;         // ep.context_node_name_prefix
  bool share_ep_contexts = false;       // ep.share_ep_contexts
  bool stop_share_ep_contexts = false;  // ep.stop_share_ep_contexts
  std::string target_isa = "native";    // epctx.target_isa: native, avx2, avx512_core
  bool allow_unsupported = false;       // epctx.allow_unsupported
  bool compute_bf16 = false;            // epctx.precision: fp32 (false) or bf16
  // session.model_external_initializers_file_folder_path: a model from memory's external data
  std::string external_data_folder;
  ImportOptions import;  // epctx.free_dimension_overrides
};

const std::vector<OptionKey<CompileOptions>>& CompileOptionKeys();

}  // namespace epctx::compile
