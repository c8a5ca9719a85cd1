// Numbers as decimal text and back, for Cast to and from string.
//
// Floats print as numpy's str() prints a scalar of their type, which is how ONNX's backend tests
// made their expected strings (test_cast_FLOAT_to_STRING: 0.296140194 prints "0.2961402"): the
// fewest significant digits that read back as the same value; positional with at least one
// fractional digit when 1e-4 <= |v| < 1e16 ("123456790.0", "0.0001"), scientific with a signed
// exponent of at least two digits otherwise ("1e-05", "3.4e+38"). NaN and the infinities print as
// the literals the operator text reserves for them: "NaN", "INF", "-INF" (as ONNX Runtime does;
// numpy would print "nan").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace epctx::exec::kernels::elementwise {

std::string FloatToText(double v);
std::string FloatToText(float v);
// A 16-bit float widened to `v`: the fewest digits that `narrow` (float -> the 16-bit value's
// bits) maps to the same bits.
std::string NarrowFloatToText(float v, uint16_t (*narrow)(float));

// The whole of `text` (ASCII whitespace around it allowed) as a number; false when it is not
// one. Besides decimal and scientific text, "NaN", "INF", "+INF" and "-INF" in any case. Values
// beyond the type's range become infinities, as with strtod.
bool TextToFloat(std::string_view text, double& out);
bool TextToFloat(std::string_view text, float& out);
// Integer text; decimal text is truncated toward zero ("100.5" -> 100, as the operator text
// allows). False when not a number or outside int64 (uint64 for the second, which also takes
// negative int64 text, wrapping as the integer casts do).
bool TextToInt(std::string_view text, int64_t& out);
bool TextToInt(std::string_view text, uint64_t& out);
// A number (non-zero: true) or "true"/"false" in any case.
bool TextToBool(std::string_view text, bool& out);

}  // namespace epctx::exec::kernels::elementwise
