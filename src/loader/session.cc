// The public Session API over the session factory.
#include "epctx/session.h"

#include "loader/model_metadata.h"
#include "loader/session_factory.h"
#include "util/file.h"
#include "util/status_macros.h"

namespace epctx {

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {

// Creates the session from `source`, profiled (epctx.profile_file) from `start` on when asked.
Result<std::unique_ptr<SessionImpl>> CreateImpl(const loader::ModelSource& source,
                                                const loader::EngineOptions& opts,
                                                loader::Profiler::Clock::time_point start) {
  std::unique_ptr<loader::Profiler> profiler;
  if (!opts.profile_file.empty()) {
    profiler = std::make_unique<loader::Profiler>(opts.profile_file, start);
  }
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl,
                         loader::CreateSession(source, opts, profiler.get()));
  if (profiler != nullptr) {
    profiler->RecordSession("session_initialization", start);
    impl->SetProfiler(std::move(profiler));
  }
  return impl;
}

// The model's metadata, then creation is over (the background preparation may widen).
Status Finish(SessionImpl& impl, const loader::ModelSource& source) {
  EPCTX_ASSIGN_OR_RETURN(impl.metadata(), loader::ReadModelMetadata(source.bytes, source.name));
  impl.CreationDone();
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Session>> Session::Create(const std::string& model_path,
                                                 const SessionOptions& options) {
  auto start = loader::Profiler::Clock::now();
  EPCTX_ASSIGN_OR_RETURN(loader::EngineOptions opts, loader::ParseEngineOptions(options));
  EPCTX_ASSIGN_OR_RETURN(MappedFile file, MappedFile::Open(model_path));
  loader::ModelSource source{file.bytes(), model_path, DirName(model_path), model_path};
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl, CreateImpl(source, opts, start));
  EPCTX_RETURN_IF_ERROR(Finish(*impl, source));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Result<std::unique_ptr<Session>> Session::CreateFromMemory(std::span<const std::byte> model_bytes,
                                                           const SessionOptions& options) {
  auto start = loader::Profiler::Clock::now();
  EPCTX_ASSIGN_OR_RETURN(loader::EngineOptions opts, loader::ParseEngineOptions(options));
  std::string dir =
      opts.compile.context_file_path.empty() ? "" : DirName(opts.compile.context_file_path);
  std::string name = opts.compile.context_file_path.empty()
                         ? "<model in memory>"
                         : opts.compile.context_file_path + " (from memory)";
  loader::ModelSource source{model_bytes, name, dir, ""};
  // From memory there is no original file to compile to a context model.
  if (opts.context_enable) {
    return EPCTX_ERROR(kUnsupported,
                       "ep.context_enable=1 needs a model file path; "
                       "Session::CreateFromMemory cannot write a context model");
  }
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl, CreateImpl(source, opts, start));
  EPCTX_RETURN_IF_ERROR(Finish(*impl, source));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<ValueInfo>& Session::inputs() const {
  return impl_->inputs();
}
const std::vector<ValueInfo>& Session::outputs() const {
  return impl_->outputs();
}
const SessionOrigin& Session::origin() const {
  return impl_->origin();
}
const ModelMetadata& Session::metadata() const {
  return impl_->metadata();
}

Result<std::vector<Tensor>> Session::Run(const std::unordered_map<std::string, Tensor>& inputs,
                                         const std::vector<std::string>& output_names) {
  return impl_->Run(inputs, output_names, nullptr);
}

Result<std::vector<Tensor>> Session::Run(const RunOptions& run_options,
                                         const std::unordered_map<std::string, Tensor>& inputs,
                                         const std::vector<std::string>& output_names) {
  return impl_->Run(inputs, output_names, &run_options);
}

Status Session::Run(const RunOptions& run_options,
                    const std::unordered_map<std::string, Tensor>& inputs,
                    std::unordered_map<std::string, Tensor>& outputs) {
  return impl_->Run(inputs, outputs, &run_options);
}

RunOptions::RunOptions() : terminate_(std::make_shared<std::atomic<bool>>(false)) {}
void RunOptions::SetTerminate() {
  terminate_->store(true);
}
void RunOptions::UnsetTerminate() {
  terminate_->store(false);
}
bool RunOptions::terminate() const {
  return terminate_->load();
}

Result<std::string> Session::EndProfiling() {
  return impl_->EndProfiling();
}

}  // namespace epctx
