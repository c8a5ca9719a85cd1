#include "compile/compile_options.h"

#include "util/status_macros.h"

namespace epctx::compile {

const std::vector<OptionKey<CompileOptions>>& CompileOptionKeys() {
  static const std::vector<OptionKey<CompileOptions>> keys = {
      {"ep.context_file_path", "",
       "where the context model is written, or, for a model loaded "
       "from memory, where it lives (to resolve the blob path)",
       [](const std::string& v, CompileOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.context_file_path, ParsePathOption("ep.context_file_path", v));
         return Status::Ok();
       }},
      {"ep.context_embed_mode", "0", "1: put the blob bytes inside the context model (limit 1 GiB)",
       [](const std::string& v, CompileOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.embed_mode, ParseBoolOption("ep.context_embed_mode", v));
         return Status::Ok();
       }},
      {"ep.context_node_name_prefix", "", "prefix of EPContext node names",
       [](const std::string& v, CompileOptions& o) {
         o.node_name_prefix = v;
         return Status::Ok();
       }},
      {"ep.share_ep_contexts", "0",
       "compile: this model joins the process's shared blob, "
       "written by the call that sets ep.stop_share_ep_contexts",
       [](const std::string& v, CompileOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.share_ep_contexts, ParseBoolOption("ep.share_ep_contexts", v));
         return Status::Ok();
       }},
      {"ep.stop_share_ep_contexts", "0",
       "compile: this is the last model of the shared blob; "
       "write it",
       [](const std::string& v, CompileOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.stop_share_ep_contexts,
                                ParseBoolOption("ep.stop_share_ep_contexts", v));
         return Status::Ok();
       }},
      {"epctx.target_isa", "native",
       "compile: the CPU tier the weights are packed for: native (this CPU's) | avx2 | "
       "avx512_core; a lower tier makes blobs for older CPUs (chosen once per process, before its "
       "first compile or session)",
       [](const std::string& v, CompileOptions& o) {
         if (v != "native" && v != "avx2" && v != "avx512_core") {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.target_isa must be \"native\", \"avx2\" or "
                              "\"avx512_core\", got \"{}\"",
                              v);
         }
         o.target_isa = v;
         return Status::Ok();
       }},
      {"session.model_external_initializers_file_folder_path", "",
       "compile, and sessions of a model given as bytes: the folder where that model finds its "
       "external data files (a model file's are found in its own folder)",
       [](const std::string& v, CompileOptions& o) {
         o.external_data_folder = v;
         return Status::Ok();
       }},
      {"epctx.precision", "fp32",
       "fp32: compute in float32, exactly as the model says | bf16: convolutions and matmuls "
       "with constant weights multiply in bfloat16 (weights packed as bfloat16, float32 "
       "accumulation; about 3 significant digits), on CPUs with avx512_bf16 only: such a blob is "
       "refused elsewhere, and a session compiled in memory there computes in float32",
       [](const std::string& v, CompileOptions& o) {
         if (v != "fp32" && v != "bf16") {
           return EPCTX_ERROR(kInvalidArgument,
                              "option epctx.precision must be \"fp32\" or \"bf16\", got \"{}\"", v);
         }
         o.compute_bf16 = v == "bf16";
         return Status::Ok();
       }},
      {"epctx.free_dimension_overrides", "",
       "compile: NAME:SIZE[,NAME:SIZE...] fixes the inputs' symbolic dimensions of those names "
       "(ONNX Runtime's AddFreeDimensionOverrideByName): the model compiles with fixed shapes, "
       "and inputs of other sizes are refused",
       [](const std::string& v, CompileOptions& o) -> Status {
         auto parsed = ParseFreeDimensionOverrides(v);
         if (!parsed.ok()) {
           return Status(parsed.status().code(),
                         "option epctx.free_dimension_overrides: " + parsed.status().message());
         }
         o.import.free_dimension_overrides = std::move(*parsed);
         return Status::Ok();
       }},
      {"epctx.allow_unsupported", "0",
       "compile: 1 writes a context model even when some node has no kernel (its sessions then "
       "fail or fall back); 0 refuses such a model, naming the nodes",
       [](const std::string& v, CompileOptions& o) {
         EPCTX_ASSIGN_OR_RETURN(o.allow_unsupported, ParseBoolOption("epctx.allow_unsupported", v));
         return Status::Ok();
       }},
  };
  return keys;
}

}  // namespace epctx::compile
