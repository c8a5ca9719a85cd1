// StringNormalizer (opset 10): drops the stopwords from X ([C] or [1, C] strings), then changes
// the case of what is left (case_change_action LOWER, UPPER or NONE). With is_case_sensitive=0 a
// word is a stopword when it equals one after both are cased (upper when the action is UPPER,
// lower otherwise), as ONNX Runtime compares them. When every word is dropped, the output is one
// empty string of shape [1] (input [C]) or [1, 1] (input [1, C]), as the operator text says.
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/text/case_mapping.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

enum class CaseAction { kNone, kLower, kUpper };

class StringNormalizerKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(std::string action, attrs.GetString("case_change_action", "NONE"));
    CaseAction case_action = CaseAction::kNone;
    if (action == "LOWER") {
      case_action = CaseAction::kLower;
    } else if (action == "UPPER") {
      case_action = CaseAction::kUpper;
    } else if (action != "NONE") {
      return EPCTX_ERROR(kInvalidArgument,
                         "StringNormalizer case_change_action '{}' is not LOWER, UPPER or NONE",
                         action);
    }
    EPCTX_ASSIGN_OR_RETURN(int64_t case_sensitive, attrs.GetInt("is_case_sensitive", 0));
    EPCTX_ASSIGN_OR_RETURN(std::string locale, attrs.GetString("locale", "en_US"));
    EPCTX_ASSIGN_OR_RETURN(std::vector<std::string> stopwords, attrs.GetStrings("stopwords"));
    EPCTX_ASSIGN_OR_RETURN(CaseMapping mapping, CaseMapping::ForLocale(locale));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kString, "X"));
    auto k = std::unique_ptr<StringNormalizerKernel>(
        new StringNormalizerKernel(case_action, case_sensitive != 0, std::move(mapping)));
    for (size_t i = 0; i < stopwords.size(); ++i) {
      std::string key = stopwords[i];
      if (!k->case_sensitive_ && !k->mapping_.Change(stopwords[i], k->compare_case_, key)) {
        return EPCTX_ERROR(kInvalidArgument, "StringNormalizer stopwords[{}] is not valid UTF-8",
                           i);
      }
      k->stopwords_.insert(std::move(key));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*x, DataType::kString, "X"));
    const std::vector<int64_t>& xs = x->shape();
    if (!(xs.size() == 1 || (xs.size() == 2 && xs[0] == 1))) {
      return EPCTX_ERROR(kInvalidArgument, "input X has shape {}, expected [C] or [1, C]",
                         ShapeToString(xs));
    }
    const std::string* in = x->data_as<std::string>();
    std::vector<std::string> kept;
    std::string cased;
    for (int64_t i = 0; i < x->element_count(); ++i) {
      const std::string& word = in[static_cast<size_t>(i)];
      bool cased_for_output = false;
      if (!stopwords_.empty()) {
        const std::string* key = &word;
        if (!case_sensitive_) {
          EPCTX_RETURN_IF_ERROR(ChangeCase(word, compare_case_, i, cased));
          key = &cased;
          // The comparison case is the action's case when there is one.
          cased_for_output = action_ != CaseAction::kNone;
        }
        if (stopwords_.count(*key) != 0) continue;
      }
      if (action_ == CaseAction::kNone) {
        kept.push_back(word);
      } else {
        if (!cased_for_output) {
          EPCTX_RETURN_IF_ERROR(ChangeCase(word, ActionCase(), i, cased));
        }
        kept.push_back(cased);
      }
    }
    const bool all_dropped = kept.empty();
    if (all_dropped) kept.emplace_back();
    std::vector<int64_t> shape = {static_cast<int64_t>(kept.size())};
    if (xs.size() == 2) shape.insert(shape.begin(), 1);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kString, std::move(shape)));
    std::string* out = y->mutable_data_as<std::string>();
    for (size_t i = 0; i < kept.size(); ++i) out[i] = std::move(kept[i]);
    return Status::Ok();
  }

 private:
  StringNormalizerKernel(CaseAction action, bool case_sensitive, CaseMapping mapping)
      : action_(action),
        case_sensitive_(case_sensitive),
        compare_case_(action == CaseAction::kUpper ? CaseMapping::Case::kUpper
                                                   : CaseMapping::Case::kLower),
        mapping_(std::move(mapping)) {}

  CaseMapping::Case ActionCase() const {
    return action_ == CaseAction::kUpper ? CaseMapping::Case::kUpper : CaseMapping::Case::kLower;
  }

  Status ChangeCase(const std::string& word, CaseMapping::Case to, int64_t index,
                    std::string& out) const {
    // The text is left out of the message: it is user data.
    if (!mapping_.Change(word, to, out)) {
      return EPCTX_ERROR(kInvalidArgument, "element {} of X is not valid UTF-8", index);
    }
    return Status::Ok();
  }

  CaseAction action_;
  bool case_sensitive_;
  CaseMapping::Case compare_case_;  // for is_case_sensitive=0
  CaseMapping mapping_;
  std::unordered_set<std::string> stopwords_;  // cased with compare_case_ when not case-sensitive
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateStringNormalizer(const NodeInfo& node) {
  return StringNormalizerKernel::Create(node);
}

}  // namespace epctx::exec::kernels
