#include "loader/loader_test_helpers.h"

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

namespace epctx::loadertest {

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("epctx-loader-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Bytes ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

void WriteBytes(const std::string& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

int CountMappings(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int count = 0;
  while (std::getline(maps, line)) {
    if (line.find(path) != std::string::npos) ++count;
  }
  return count;
}

std::vector<std::string> SmapsFieldOfMappings(const std::string& path, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  std::vector<std::string> values;
  std::string line;
  bool ours = false;
  while (std::getline(smaps, line)) {
    // A mapping's header line starts with its address range ("7f..-7f.. r--s ... /path").
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash > 0 &&
        std::isxdigit(static_cast<unsigned char>(line[0])) && line.find(' ') > dash) {
      ours = line.find(path) != std::string::npos;
    } else if (ours && line.rfind(field, 0) == 0) {
      values.push_back(line.substr(field.size()));
    }
  }
  return values;
}

int64_t MappedResidentBytes(const std::string& path) {
  int64_t kib = 0;
  for (const std::string& rss : SmapsFieldOfMappings(path, "Rss:")) kib += std::stoll(rss);
  return kib * 1024;
}

void DeclareRowInputAndOutput(onnx::GraphProto& g, int64_t width) {
  for (auto [vi, name] : {std::pair{g.add_input(), "x"}, std::pair{g.add_output(), "y"}}) {
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(width);
  }
}

void WriteScaledMatMul(const std::string& path, int64_t width, float scale) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("scaled");
  DeclareRowInputAndOutput(*g, width);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(width);
  w->add_dims(width);
  std::vector<float> values(static_cast<size_t>(width * width));
  for (int64_t i = 0; i < width; ++i) {
    for (int64_t j = 0; j < width; ++j) {
      values[static_cast<size_t>(i * width + j)] = scale * static_cast<float>(i + 1) / width;
    }
  }
  w->set_raw_data(values.data(), values.size() * sizeof(float));
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("MatMul");
  // std::string, not const char*: GCC 12 warns falsely (-Wrestrict) inside protobuf's overload.
  n->add_input(std::string("x"));
  n->add_input(std::string("w"));
  n->add_output(std::string("y"));
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

}  // namespace epctx::loadertest
