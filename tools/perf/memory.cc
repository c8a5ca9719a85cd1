#include "perf/memory.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "util/status_macros.h"

namespace epctx::cli {
namespace {

std::string ProcFile(pid_t pid, const char* name) {
  return pid == 0 ? std::string("/proc/self/") + name : "/proc/" + std::to_string(pid) + "/" + name;
}

// "Rss:   1234 kB" -> true, key "Rss", bytes 1234 * 1024.
bool ParseField(const std::string& line, std::string* key, uint64_t* bytes) {
  size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  unsigned long long kb = 0;
  char unit[8] = {};
  if (std::sscanf(line.c_str() + colon + 1, " %llu %7s", &kb, unit) != 2) return false;
  if (std::string(unit) != "kB") return false;
  *key = line.substr(0, colon);
  *bytes = static_cast<uint64_t>(kb) * 1024;
  return true;
}

// A mapping's header line: "start-end perms offset major:minor inode [path]".
bool ParseHeader(const std::string& line, uint64_t* device, uint64_t* inode) {
  char range[64], perms[8], offset[32];
  unsigned major_no = 0, minor_no = 0;
  unsigned long long ino = 0;
  if (std::sscanf(line.c_str(), "%63s %7s %31s %x:%x %llu", range, perms, offset, &major_no,
                  &minor_no, &ino) != 6) {
    return false;
  }
  if (std::string(range).find('-') == std::string::npos) return false;
  *device = static_cast<uint64_t>(makedev(major_no, minor_no));
  *inode = static_cast<uint64_t>(ino);
  return true;
}

}  // namespace

BlobFileId IdentifyBlobFile(const std::string& path) {
  BlobFileId id;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return id;
  id.valid = true;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  return id;
}

Result<MemorySample> SampleMemory(pid_t pid, const BlobFileId& blob, std::string step) {
  MemorySample sample;
  sample.step = std::move(step);
  // Every figure comes from one pass over smaps, so that they add up even while other threads
  // (the kernel preparation of a session just created) allocate meanwhile.
  std::string line, key;
  uint64_t bytes = 0;
  bool have_rss = false;
  std::string smaps_path = ProcFile(pid, "smaps");
  std::ifstream smaps(smaps_path);
  if (!smaps) return EPCTX_ERROR(kIoError, "cannot read '{}'", smaps_path);
  bool in_blob = false;
  uint64_t vma_rss = 0, vma_anon = 0;
  auto close_vma = [&] {
    if (!in_blob) sample.other_file_rss_bytes += vma_rss > vma_anon ? vma_rss - vma_anon : 0;
    vma_rss = vma_anon = 0;
  };
  while (std::getline(smaps, line)) {
    uint64_t device = 0, inode = 0;
    if (ParseHeader(line, &device, &inode)) {
      close_vma();
      in_blob = blob.valid && inode != 0 && device == blob.device && inode == blob.inode;
      continue;
    }
    if (!ParseField(line, &key, &bytes)) continue;
    if (key == "Rss") {
      vma_rss = bytes;
      sample.rss_bytes += bytes;
      have_rss = true;
      if (in_blob) sample.blob_mapped_rss_bytes += bytes;
    } else if (key == "Pss") {
      sample.pss_bytes += bytes;
      if (in_blob) sample.blob_mapped_pss_bytes += bytes;
    } else if (key == "Anonymous") {
      vma_anon = bytes;
      sample.anon_bytes += bytes;
    }
  }
  close_vma();
  if (!have_rss) return EPCTX_ERROR(kIoError, "'{}' has no Rss line", smaps_path);
  return sample;
}

}  // namespace epctx::cli
