// ONNX operator schemas for the operators ONNX Runtime adds (its contrib ops: com.microsoft, and
// SimplifiedLayerNormalization in the ONNX domain) that epctx implements. onnx's checker and
// shape inference know only their own operators: without a schema, a contrib op's outputs get
// no type, and everything shape inference derives from them is lost (a graph of MatMulNBits
// would import with untyped activations). Each family's schemas live in a file of its own;
// their inference functions follow ORT's operator specifications.
#pragma once

namespace epctx::compile {

// The contrib domain's name, as models import it.
inline constexpr const char* kMicrosoftDomain = "com.microsoft";

// The com.microsoft ops no kernel runs whose schemas carry a function body of ONNX operators
// (built per node), which the compiler expands: they run on the kernels of those operators.
inline constexpr const char* kExpandedContribOps[] = {
    "Attention",  "DynamicQuantizeMatMul",   "MatMulIntegerToFloat", "MultiHeadAttention",
    "QAttention", "QEmbedLayerNormalization"};

// Registers every family's schemas with onnx's registry (and the com.microsoft domain with its
// version range). Idempotent and safe to call from several threads.
void RegisterContribSchemas();

namespace contrib {
// One per family, called once by RegisterContribSchemas.
void RegisterQuantizationSchemas();
void RegisterNormalizationSchemas();
void RegisterActivationSchemas();
void RegisterAttentionSchemas();
void RegisterBertAttentionSchemas();
void RegisterMultiHeadAttentionSchemas();
void RegisterQuantizedMatMulSchemas();
void RegisterQEmbedLayerNormSchemas();
}  // namespace contrib

}  // namespace epctx::compile
