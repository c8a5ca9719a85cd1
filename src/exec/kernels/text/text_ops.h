// Registration functions of the text/ kernel family.
#pragma once

#include "exec/kernel.h"

namespace epctx::exec::kernels {

void RegisterTfIdfVectorizer(KernelRegistry& registry);  // tfidf_vectorizer.cc

}  // namespace epctx::exec::kernels
