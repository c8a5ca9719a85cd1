// Which op a conformance test exercises, its family, and whether it is in the core subset (only
// float32/int32/int64/bool tensors, no training op, no sequence/optional/string values).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "conformance/model_info.h"
#include "conformance/suite.h"

namespace epctx::cli::conformance {

enum class Family {
  kElementwise,
  kReduction,
  kShape,
  kNN,
  kRecurrent,
  kControlFlow,
  kQuantization,
  kTraining,
  kSequence,
  kOther,
};
inline constexpr Family kFamilies[] = {
    Family::kElementwise, Family::kReduction,   Family::kShape,        Family::kNN,
    Family::kRecurrent,   Family::kControlFlow, Family::kQuantization, Family::kTraining,
    Family::kSequence,    Family::kOther,
};

// "elementwise math/logic", "reductions", ...
const char* FamilyName(Family family);
// The family of one ONNX op type; kOther for op types the table does not know.
Family FamilyOfOp(std::string_view op_type);

struct Classification {
  // The op under test: the model's only op type besides Constant; for "<name>_expanded" (a
  // function body) the op of test "<name>". Empty for models of several ops.
  std::string op;
  Family family = Family::kOther;
  bool core = false;
};

// One classification per test; `infos[i]` describes `tests[i]`. The model of a test that an
// `_expanded` test expands is read when it is not among `tests`.
std::vector<Classification> ClassifyTests(const std::vector<TestCase>& tests,
                                          const std::vector<ModelInfo>& infos);

}  // namespace epctx::cli::conformance
