// TfIdfVectorizer (opset 9) on int32/int64 tokens (pool_int64s) or string tokens (pool_strings,
// each distinct string numbered once, so that both count on one integer n-gram pool): counts of
// the pool's n-grams in each row of X ([C] or [N, C]), including n-grams whose tokens are `skip`
// apart for every skip up to max_skip_count, weighted by mode. A unigram is counted once per
// position, whatever the skip.
//
// `weights` is read by output coordinate (Y[j] uses weights[j]), as ONNX Runtime and ONNX's
// reference evaluator do; the operator text ties weight i to pool n-gram i instead, which is the
// same whenever ngram_indexes is the identity.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/indexing/index_input.h"
#include "exec/kernels/text/ngram_pool.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class Weighting { kTf, kIdf, kTfIdf };

class TfIdfVectorizerKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const Attributes& attrs = *node.attrs;
    auto k = std::unique_ptr<TfIdfVectorizerKernel>(new TfIdfVectorizerKernel());
    EPCTX_ASSIGN_OR_RETURN(std::string mode, attrs.GetString("mode", ""));
    if (mode == "TF") {
      k->weighting_ = Weighting::kTf;
    } else if (mode == "IDF") {
      k->weighting_ = Weighting::kIdf;
    } else if (mode == "TFIDF") {
      k->weighting_ = Weighting::kTfIdf;
    } else {
      return EPCTX_ERROR(kInvalidArgument, "TfIdfVectorizer mode '{}' is not TF, IDF or TFIDF",
                         mode);
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t min_length, attrs.GetInt("min_gram_length", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t max_length, attrs.GetInt("max_gram_length", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t max_skip, attrs.GetInt("max_skip_count", 0));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> counts, attrs.GetInts("ngram_counts"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, attrs.GetInts("ngram_indexes"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> pool, attrs.GetInts("pool_int64s"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> pool_strings, attrs.GetStrings("pool_strings"));
    EPCTX_ASSIGN_OR_RETURN(k->weights_, attrs.GetFloats("weights"));
    if (min_length < 1 || max_length < min_length ||
        max_length > static_cast<int64_t>(counts.size())) {
      return EPCTX_ERROR(kInvalidArgument,
                         "TfIdfVectorizer needs 1 <= min_gram_length ({}) <= max_gram_length ({}) "
                         "<= the length of ngram_counts ({})",
                         min_length, max_length, counts.size());
    }
    if (max_skip < 0) {
      return EPCTX_ERROR(kInvalidArgument, "TfIdfVectorizer max_skip_count {} is negative",
                         max_skip);
    }
    if (!pool.empty() && !pool_strings.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "TfIdfVectorizer has both pool_int64s and pool_strings; it takes one");
    }
    k->string_tokens_ = !pool_strings.empty();
    for (const std::string& token : pool_strings) {
      const auto next = static_cast<int64_t>(k->token_ids_.size());
      pool.push_back(k->token_ids_.emplace(token, next).first->second);
    }
    if (pool.empty() || indexes.empty()) {
      return EPCTX_ERROR(kInvalidArgument,
                         "TfIdfVectorizer needs non-empty ngram_indexes and pool_int64s or "
                         "pool_strings");
    }
    EPCTX_ASSIGN_OR_RETURN(k->pool_,
                           NgramPool::Build(pool, counts, min_length, max_length,
                                            k->string_tokens_ ? "pool_strings" : "pool_int64s"));
    if (k->pool_.size() != static_cast<int64_t>(indexes.size())) {
      return EPCTX_ERROR(kInvalidArgument,
                         "TfIdfVectorizer ngram_indexes has {} entries for the {} n-grams of the "
                         "pool",
                         indexes.size(), k->pool_.size());
    }
    for (int64_t j : indexes) {
      if (j < 0 || j >= kMaxOutputSize) {
        return EPCTX_ERROR(kInvalidArgument,
                           "TfIdfVectorizer ngram_indexes value {} is not in "
                           "[0, {})",
                           j, kMaxOutputSize);
      }
    }
    k->output_size_ = *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (!k->weights_.empty() && static_cast<int64_t>(k->weights_.size()) < k->output_size_) {
      return EPCTX_ERROR(kInvalidArgument,
                         "TfIdfVectorizer has {} weights for {} output coordinates",
                         k->weights_.size(), k->output_size_);
    }
    k->indexes_ = std::move(indexes);
    k->min_length_ = min_length;
    k->max_length_ = max_length;
    k->max_skip_ = max_skip;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() != 1 && xs.size() != 2) {
      return EPCTX_ERROR(kInvalidArgument, "input X has rank {}, expected 1 ([C]) or 2 ([N, C])",
                         xs.size());
    }
    EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> tokens, Tokens(*x));
    const int64_t rows = xs.size() == 2 ? xs[0] : 1;
    const int64_t columns = xs.back();
    std::vector<int64_t> out_shape = {output_size_};
    if (xs.size() == 2) out_shape.insert(out_shape.begin(), rows);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));
    float* out = y->mutable_data_as<float>();
    std::vector<uint32_t> counts(static_cast<size_t>(output_size_));
    std::vector<int64_t> ngram;
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0u);
      CountRow(tokens.data() + r * columns, columns, ngram, counts);
      Weigh(counts, out + r * output_size_);
    }
    return Status::Ok();
  }

 private:
  // Output coordinates per row: a limit so that a hostile blob cannot ask for gigabytes of counts.
  static constexpr int64_t kMaxOutputSize = int64_t{1} << 26;

  TfIdfVectorizerKernel() = default;

  // X's tokens as numbers: integer tokens as they are; strings by their number in pool_strings,
  // -1 (which no pool n-gram holds) for a string the pool does not list.
  Result<std::vector<int64_t>> Tokens(const Tensor& x) const {
    if (!string_tokens_) return ReadIndexTensor(x, "X");
    if (x.dtype() != DataType::kString) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input X has type {}, expected string (the pool is pool_strings)",
                         DataTypeName(x.dtype()));
    }
    std::vector<int64_t> tokens(static_cast<size_t>(x.element_count()));
    const std::string* in = x.data_as<std::string>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      const auto it = token_ids_.find(in[i]);
      tokens[i] = it == token_ids_.end() ? -1 : it->second;
    }
    return tokens;
  }

  void Count(const std::vector<int64_t>& ngram, std::vector<uint32_t>& counts) const {
    const int64_t id = pool_.Find(ngram);
    if (id >= 0) ++counts[static_cast<size_t>(indexes_[static_cast<size_t>(id)])];
  }

  void CountRow(const int64_t* row, int64_t columns, std::vector<int64_t>& ngram,
                std::vector<uint32_t>& counts) const {
    int64_t shortest = min_length_;
    if (shortest == 1) {
      // Unigrams do not depend on the skip: once per position.
      for (int64_t i = 0; i < columns; ++i) {
        ngram.assign(1, row[i]);
        Count(ngram, counts);
      }
      shortest = 2;
      if (shortest > max_length_) return;
    }
    // Past a distance of `columns` no n-gram of two or more tokens fits in the row.
    for (int64_t distance = 1; distance - 1 <= max_skip_ && distance < columns; ++distance) {
      // Starts from which at least a `shortest`-gram fits in the row.
      const int64_t span = distance * (shortest - 1);
      for (int64_t start = 0; start + span < columns; ++start) {
        ngram.clear();
        for (int64_t at = start, length = 1; length <= max_length_ && at < columns;
             ++length, at += distance) {
          ngram.push_back(row[at]);
          if (length >= shortest) Count(ngram, counts);
        }
      }
    }
  }

  void Weigh(const std::vector<uint32_t>& counts, float* out) const {
    for (size_t j = 0; j < counts.size(); ++j) {
      const float w = weights_.empty() ? 1.0f : weights_[j];
      switch (weighting_) {
        case Weighting::kTf:
          out[j] = static_cast<float>(counts[j]);
          break;
        case Weighting::kIdf:
          out[j] = counts[j] > 0 ? w : 0.0f;
          break;
        case Weighting::kTfIdf:
          out[j] = static_cast<float>(counts[j]) * w;
          break;
      }
    }
  }

  Weighting weighting_ = Weighting::kTf;
  int64_t min_length_ = 1;
  int64_t max_length_ = 1;
  int64_t max_skip_ = 0;
  NgramPool pool_;
  bool string_tokens_ = false;                          // pool_strings
  std::unordered_map<std::string, int64_t> token_ids_;  // pool_strings: string -> token number
  std::vector<int64_t> indexes_;                        // pool n-gram number -> output coordinate
  std::vector<float> weights_;                          // by output coordinate; empty: all ones
  int64_t output_size_ = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateTfIdfVectorizer(const NodeInfo& node) {
  return TfIdfVectorizerKernel::Create(node);
}

}  // namespace epctx::exec::kernels
