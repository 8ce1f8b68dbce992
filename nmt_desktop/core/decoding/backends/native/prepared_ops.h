// The projections and layer norms of the compiled steps (decode_step.cpp, encode_sources.cpp), over the prepared
// tensors of core/decoding/backends/prepared_linear.py: a product is the ATen call PreparedLinear makes (addmm,
// oneDNN's blocked layout from the row counts it chose, or fbgemm's int8 kernel), a layer norm one_query.h's loop.
#pragma once

#include <ATen/ATen.h>
#include <ATen/native/quantized/PackedParams.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include "one_query.h"

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace prepared {

using at::Tensor;
using OptTensor = std::optional<Tensor>;
using PackedPtr = c10::intrusive_ptr<LinearPackedParamsBase>;
using Scalars = c10::List<std::optional<at::Scalar>>;

inline auto& onednn_linear() {
  static auto op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("mkldnn::_linear_pointwise", "")
      .typed<Tensor(const Tensor&, const Tensor&, const OptTensor&, c10::string_view, Scalars,
                    std::optional<c10::string_view>)>();
  return op;
}

inline auto& onednn_reorder() {
  static auto op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("mkldnn::_reorder_linear_weight", "")
      .typed<Tensor(const Tensor&, std::optional<int64_t>)>();
  return op;
}

constexpr int64_t kBlockingRows = 16;  // as prepared_linear._BLOCKING_ROWS

// One projection, dispatched as PreparedLinear does (prepared_linear.py decides when oneDNN's blocked
// layout serves a product; this code only obeys its row counts).
struct Linear {
  Tensor weight_t;  // (in, out) float; undefined for int8
  Tensor bias;      // (out,) or undefined
  PackedPtr packed;  // fbgemm int8 weights, or null
  int64_t blocked_from_rows = 0;  // oneDNN's layout from this many rows on one thread
  int64_t blocked_from_rows_threaded = 0;  // ... and when several threads run
  Tensor blocked;  // oneDNN layout, made at the first product that uses it

  OptTensor opt_bias() const { return bias.defined() ? OptTensor(bias) : std::nullopt; }

  const Tensor* use_blocked(const Tensor& x, std::mutex& lock) {
    if (packed) return nullptr;
    if (x.size(0) < (at::get_num_threads() > 1 ? blocked_from_rows_threaded : blocked_from_rows)) return nullptr;
    std::lock_guard<std::mutex> guard(lock);  // two searches may share one step
    if (!blocked.defined()) blocked = onednn_reorder().call(weight_t.t(), kBlockingRows);
    return &blocked;
  }

  Tensor operator()(const Tensor& x, std::mutex& lock) {  // x (N, in) -> (N, out)
    if (packed) return packed->apply_dynamic(x, /*reduce_range=*/true);
    if (auto* w = use_blocked(x, lock)) return onednn_linear().call(x, *w, opt_bias(), "none", Scalars(), std::nullopt);
    return bias.defined() ? at::addmm(bias, x, weight_t) : at::mm(x, weight_t);
  }

  Tensor activated(const Tensor& x, const std::string& activation, std::mutex& lock) {
    if (auto* w = use_blocked(x, lock)) {
      if (activation == "relu") return onednn_linear().call(x, *w, opt_bias(), "relu", Scalars(), std::nullopt);
      if (activation == "silu") return onednn_linear().call(x, *w, opt_bias(), "swish", Scalars(), std::nullopt);
      return onednn_linear().call(x, *w, opt_bias(), "gelu", Scalars(), c10::string_view("none"));
    }
    Tensor h = (*this)(x, lock);
    if (activation == "relu") return h.relu_();
    if (activation == "silu") return at::silu_(h);
    return at::gelu(h);
  }
};

struct Norm {
  Tensor weight, bias;  // (D,) or undefined
  double eps;
};

// x (N, D) -> layer_norm(x) into out (N, D); out may be x
inline void norm_rows(const Tensor& x, Tensor& out, const Norm& n) {
  const int64_t N = x.size(0), D = x.size(1);
  const float* w = n.weight.defined() ? n.weight.data_ptr<float>() : nullptr;
  const float* b = n.bias.defined() ? n.bias.data_ptr<float>() : nullptr;
  for (int64_t r = 0; r < N; ++r)
    one_query::layer_norm(x.data_ptr<float>() + r * D, out.data_ptr<float>() + r * D, w, b, D,
                          static_cast<float>(n.eps));
}

// The stream after a sublayer: x += y (N, D), then post-norm models normalise it in place.
inline void residual(Tensor& x, const Tensor& y, const Norm& n, bool pre_norm) {
  x.add_(y);
  if (!pre_norm) norm_rows(x, x, n);
}

// The sublayer's input: the stream itself (post-norm) or its layer norm in `h` (pre-norm).
inline const Tensor& sublayer_input(const Tensor& x, Tensor& h, const Norm& n, bool pre_norm) {
  if (!pre_norm) return x;
  norm_rows(x, h, n);
  return h;
}

inline void check_activation(const std::string& activation) {
  TORCH_CHECK(activation == "relu" || activation == "silu" || activation == "gelu", "unknown activation ", activation);
}


// A compiled step's projections and norms, in the order its Python side adds them (compiled_step.py,
// compiled_encoder.py); `lock` guards the oneDNN layouts made at first use (two searches may share a step).
struct Weights {
  std::vector<Linear> linears;
  std::vector<Norm> norms;
  std::mutex lock;

  void add_linear(Tensor weight_t, OptTensor bias, int64_t blocked_from_rows, int64_t blocked_from_rows_threaded) {
    Linear linear;
    linear.weight_t = std::move(weight_t);
    linear.bias = bias.value_or(Tensor());
    linear.blocked_from_rows = blocked_from_rows;
    linear.blocked_from_rows_threaded = blocked_from_rows_threaded;
    linears.push_back(std::move(linear));
  }

  void add_linear_int8(PackedPtr packed) {
    Linear linear;
    linear.packed = std::move(packed);
    linears.push_back(std::move(linear));
  }

  void add_norm(OptTensor weight, OptTensor bias, double eps) {
    norms.push_back({weight.value_or(Tensor()), bias.value_or(Tensor()), eps});
  }
};

// The methods that fill a step's `Weights`, for a custom class T deriving from it.
template <typename T>
torch::class_<T>& with_weights(torch::class_<T>& c) {
  return c
      .def("add_linear", [](const c10::intrusive_ptr<T>& self, Tensor weight_t, OptTensor bias, int64_t rows,
                            int64_t rows_threaded) { self->add_linear(weight_t, bias, rows, rows_threaded); })
      .def("add_linear_int8", [](const c10::intrusive_ptr<T>& self, PackedPtr packed) { self->add_linear_int8(packed); })
      .def("add_norm", [](const c10::intrusive_ptr<T>& self, OptTensor weight, OptTensor bias, double eps) {
        self->add_norm(weight, bias, eps);
      });
}

}  // namespace prepared
