// Binds a verified program to kernels (once per session: O(nodes)) and runs it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/kernel.h"
#include "exec/value_buffer_pool.h"
#include "exec/value_decl.h"

namespace epctx::format {
class BlobView;
}  // namespace epctx::format

namespace epctx::fb {
struct Model;
struct Program;
struct Node;
}  // namespace epctx::fb

namespace epctx::exec {

// Weight `index` of the blob as a read-only view that keeps the blob alive.
using WeightResolver = std::function<Result<Tensor>(uint32_t index)>;

// One node of a running program, as a NodeObserver sees it. Valid during the call only.
class ObservedNode {
 public:
  size_t index() const { return index_; }  // position in its program
  int depth() const { return depth_; }     // 0: the main graph; n: inside n control-flow bodies
  std::string_view name() const;
  std::string_view op_type() const;
  const Kernel& kernel() const;
  size_t input_count() const;
  const Tensor* input(size_t i) const;  // nullptr when omitted
  bool input_is_weight(size_t i) const;
  size_t output_count() const;
  const Tensor* output(size_t i) const;  // nullptr before the node ran, or when omitted

 private:
  friend class BoundProgram;
  ObservedNode(const BoundProgram& program, size_t index, int depth,
               const std::vector<Tensor>& values)
      : program_(program), index_(index), depth_(depth), values_(values) {}
  const Tensor* value(int32_t v) const;
  const BoundProgram& program_;
  size_t index_;
  int depth_;
  const std::vector<Tensor>& values_;
};

// Told about every node a Run executes (profiling). A Run given an observer passes it on to the
// control-flow bodies its kernels run on the same thread. Without one, a run costs one branch per
// node more than before.
class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void BeforeNode(const ObservedNode& node) = 0;
  // After the kernel returned successfully (not called when it failed).
  virtual void AfterNode(const ObservedNode& node) = 0;
};

// What a Run did beyond computing, for profiles.
struct RunStats {
  // Bytes of program outputs copied after the last node: outputs in memory the caller may not
  // keep (an input, a weight, the arena) handed out as copies, and bound outputs that could not
  // be computed in their bound memory, copied into it.
  uint64_t output_bytes_copied = 0;
};

struct OutputBindings;

class BoundProgram {
 public:
  // Binds program `index` of a model's `programs` and, through its control-flow nodes, the
  // bodies it uses. The programs must have passed format::ValidateProgram (which orders each
  // body after its user, so binding terminates) and must outlive the BoundProgram.
  static Result<std::unique_ptr<BoundProgram>> Bind(std::span<const fb::Program* const> programs,
                                                    uint32_t index, const WeightResolver& weights,
                                                    int num_threads);
  // A model with one program.
  static Result<std::unique_ptr<BoundProgram>> Bind(const fb::Program& program,
                                                    const WeightResolver& weights, int num_threads);
  // The main program of `model` in `blob`, with the bodies it uses, its weights views of the
  // blob's bytes (no owner: the blob must outlive the BoundProgram; bind_model.cc).
  static Result<std::unique_ptr<BoundProgram>> BindModel(const format::BlobView& blob,
                                                         const fb::Model& model, int num_threads);

  // Limits of one Bind(): how deep bodies may nest, and how many programs (each use of a body
  // counts) may be bound in all.
  static constexpr int kMaxBodyDepth = 64;
  static constexpr size_t kMaxBoundPrograms = 1u << 16;
  // Free value buffers a session keeps for its next run (ValueBufferPool), at most.
  static constexpr uint64_t kMaxRetainedValueBytes = uint64_t{256} << 20;

  // What the program declares for its input or output `index`.
  const ValueDecl& input_decl(size_t index) const { return slots_[inputs_[index]].decl; }
  const ValueDecl& output_decl(size_t index) const { return slots_[outputs_[index]].decl; }
  uint64_t arena_bytes() const { return arena_bytes_; }
  // The threads its kernels run on (the session's intra-op threads; all usable cores for 0).
  int num_threads() const { return num_threads_; }

  // Kernel::Prepare for every node of this program with the shapes the compiler knows, in
  // program order, until `stop` is set. Several threads may share the work: each takes the
  // next node not yet taken from `next_node` (start it at 0).
  void Prepare(const std::atomic<bool>& stop, std::atomic<size_t>& next_node) const;

  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }

  // `inputs` in the program's input order (already checked by the caller); returns every program
  // output in order, each in memory of its own. `arena` holds at least arena_bytes() bytes,
  // 64-byte aligned, and is not used by anyone else during the call.
  // `control` is checked before every node; control-flow nodes pass it to their bodies.
  // `observer` (may be null) sees every node; when null, a run nested in an observed run on this
  // thread (a control-flow body) reports to that run's observer.
  // `bound_outputs` (empty, or one per program output) binds outputs to the caller's memory: a
  // numeric tensor there (checked by the caller against the declaration) is written with that
  // output, which is then returned as that same tensor; an empty Tensor() leaves the output to
  // the run. Outputs bound to overlapping memory are refused. The node making a bound output
  // writes it into the bound memory (AllocateOutput hands it out, and fails when the node asks
  // for another type or shape) unless that memory overlaps an input's, where this holds only
  // when no node reads that input after it and no output returns it, and, when the node itself
  // reads it, when it is exactly that input's memory and the kernel WritesInPlace; otherwise the
  // output is computed in memory of the run's and copied into the bound memory after the last
  // node, when every reader has seen the input unchanged. `stats` (may be null) receives counts.
  Result<std::vector<Tensor>> Run(std::span<const Tensor> inputs, std::span<std::byte> arena,
                                  const RunControl& control = {}, NodeObserver* observer = nullptr,
                                  std::span<const Tensor> bound_outputs = {},
                                  RunStats* stats = nullptr) const;

 private:
  struct Slot {
    int64_t arena_offset = -1;
    int64_t arena_bytes = 0;
    int last_use = -1;  // node index after which the value can be released
    // What the program declares; kernels were bound against it, so a tensor that disagrees is
    // refused before another kernel reads it.
    ValueDecl decl;
  };
  // kInvalidArgument when `t` is not of the kind (tensor, sequence, optional) and element type
  // value `v` declares.
  Status CheckKindAndType(int32_t v, const Tensor& t) const;
  // Whether `t` (a tensor of `shape`) has the rank and static dims value `v` declares.
  bool HasDeclaredShape(int32_t v, const Tensor& t) const;
  bool HasDeclaredShape(int32_t v, std::span<const int64_t> shape) const;
  // kInvalidArgument when `t` is not of the type value `v` declares, or (with `check_shape`)
  // not of its shape.
  Status CheckDeclared(int32_t v, const Tensor& t, bool check_shape) const;
  // The kInvalidArgument error for value `v` found (or asked for) as `type` `shape`.
  Status DeclarationMismatch(int32_t v, DataType type, const std::vector<int64_t>& shape) const;
  struct BoundNode {
    std::unique_ptr<Kernel> kernel;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    const fb::Node* node = nullptr;
  };
  friend class ObservedNode;
  class RunContext;
  // Output bindings (executor_outputs.cc): the run's bindings after checking `bound` (one per
  // program output), whether node `k`'s bound outputs may be written in their bound memory, and
  // the run's outputs after its last node.
  Status BindOutputs(std::span<const Tensor> bound, OutputBindings& bindings) const;
  void PlanBoundOutputs(size_t k, const std::vector<Tensor>& values,
                        OutputBindings& bindings) const;
  Result<std::vector<Tensor>> FinishOutputs(std::vector<Tensor>& values,
                                            std::vector<uint8_t>& heap_owned,
                                            const OutputBindings& bindings, RunStats* stats) const;
  std::string_view ValueName(int32_t v) const;
  struct BindState;
  static Result<std::unique_ptr<BoundProgram>> BindAt(BindState& state, uint32_t index, int depth);

  uint64_t arena_bytes_ = 0;
  int num_threads_ = 1;
  // Values that do not fit their arena place, kept between runs (shared with the bodies).
  std::shared_ptr<ValueBufferPool> buffers_;
  std::vector<Slot> slots_;
  std::vector<int64_t> declared_dims_;  // the slots' declared shapes point here
  std::vector<Tensor> weights_;         // per value; empty for non-weights
  std::vector<BoundNode> nodes_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
};

// Attribute views over a program node (for kernel creation).
Attributes AttributesFromNode(const fb::Node& node);

}  // namespace epctx::exec
