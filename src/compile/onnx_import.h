// Reads an original ONNX model into the IR: parse, onnx::checker, shape inference, initializers
// (external data mapped, not copied), Constant nodes turned into constants.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compile/external_data_record.h"
#include "compile/import_options.h"
#include "compile/ir.h"
#include "epctx/status.h"

namespace epctx::compile {

struct SourceInfo {
  std::string path;  // empty for a model given as bytes
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t hash = 0;  // XXH3-64 of the file's bytes
  // The external data files the import read, in location order.
  std::vector<ExternalDataRecord> external_data;
};

struct ModelDescription {
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::string graph_doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;
};

struct ImportedModel {
  IrGraph graph;
  SourceInfo source;
  int64_t ir_version = 0;
  // The original graph inputs and outputs as serialized onnx::ValueInfoProto, for the context
  // model, which must declare the same ones.
  std::vector<std::string> input_value_infos;
  std::vector<std::string> output_value_infos;
  // The original's description, which its context model repeats (a session of either reports
  // the same model metadata): domain, model_version, doc strings, metadata_props in file order.
  ModelDescription description;
};

// `path` is used for error messages and to resolve external data.
Result<ImportedModel> ImportModelFile(const std::string& path, const ImportOptions& options = {});
// A model in memory; `model_dir` resolves external data (empty: external data is refused).
// `bytes` must stay valid during the call only.
Result<ImportedModel> ImportModelBytes(std::span<const std::byte> bytes, const std::string& name,
                                       const std::string& model_dir,
                                       const ImportOptions& options = {});

}  // namespace epctx::compile
