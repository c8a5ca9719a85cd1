#include "perf/result_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "util/status_macros.h"

namespace epctx::cli {

std::string ResultModelName(const std::string& model_path) {
  // ORT: GetLastComponent of the model's directory. (It also strips a "test_" prefix, but its
  // comparison matches only a folder named exactly "test_", so in effect it never does.)
  std::filesystem::path dir = std::filesystem::path(model_path).parent_path();
  if (dir.empty()) dir = std::filesystem::current_path();
  return std::filesystem::absolute(dir).lexically_normal().filename().string();
}

std::string LatencyStatistics(const std::vector<double>& latency_s) {
  if (latency_s.empty()) return "";
  std::vector<double> sorted = latency_s;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  auto at = [&](double p) { return sorted[static_cast<size_t>(static_cast<double>(n) * p)]; };
  return fmt::format(
      "Min Latency: {:g} s\nMax Latency: {:g} s\nP50 Latency: {:g} s\nP90 Latency: {:g} s\n"
      "P95 Latency: {:g} s\nP99 Latency: {:g} s\nP999 Latency: {:g} s\n",
      sorted.front(), sorted.back(), at(0.5), at(0.9), at(0.95), at(0.99), at(0.999));
}

Status AppendResultFile(const std::string& path, const std::string& model_name,
                        const std::vector<double>& latency_s, uint64_t peak_working_set_bytes,
                        int cpu_usage_percent, bool statistics) {
  std::string text;
  for (size_t run = 0; run < latency_s.size(); ++run) {
    text += fmt::format("{},{:g},{},{},{}\n", model_name, latency_s[run], peak_working_set_bytes,
                        cpu_usage_percent, run);
  }
  if (statistics && !latency_s.empty()) {
    text += '\n';
    text += LatencyStatistics(latency_s);
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "a"), &std::fclose);
  if (file == nullptr) {
    return EPCTX_ERROR(kIoError, "result file '{}': cannot open: {}", path, std::strerror(errno));
  }
  if (std::fwrite(text.data(), 1, text.size(), file.get()) != text.size() ||
      std::fflush(file.get()) != 0) {
    return EPCTX_ERROR(kIoError, "result file '{}': cannot write: {}", path, std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace epctx::cli
