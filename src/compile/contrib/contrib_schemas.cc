#include "compile/contrib/contrib_schemas.h"

#include <onnx/defs/schema.h>

#include <mutex>

namespace epctx::compile {
namespace {

void Register() {
  auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
  if (ranges.Map().count(kMicrosoftDomain) == 0) {
    // ORT's contrib schemas are all version 1 of their domain.
    ranges.AddDomainToVersion(kMicrosoftDomain, 1, 1);
  }
  contrib::RegisterQuantizationSchemas();
  contrib::RegisterNormalizationSchemas();
  contrib::RegisterActivationSchemas();
  contrib::RegisterAttentionSchemas();
  contrib::RegisterBertAttentionSchemas();
  contrib::RegisterMultiHeadAttentionSchemas();
  contrib::RegisterQuantizedMatMulSchemas();
  contrib::RegisterQEmbedLayerNormSchemas();
}

}  // namespace

void RegisterContribSchemas() {
  static std::once_flag once;
  std::call_once(once, Register);
}

}  // namespace epctx::compile
