// The decoder's single-position step (core/fused_step.py) in C++ over the same prepared tensors.
//
// The Python fused step costs ~30 tensor operations per layer, each a few microseconds of
// interpreter and binding overhead before the kernel runs; at batch 1 on a small model (and always
// with int8 weights, whose products are short) that overhead is most of the step. This is the same
// sequence of ATen calls (addmm / oneDNN / fbgemm products, bmm, softmax, layer_norm), made from
// C++: no new arithmetic, the same results (int8: up to the last bit, the query scale being applied
// inside baddbmm). Built by core/native_library.py, used through
// core/native_step.py; without it the Python fused step runs.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/native/quantized/PackedParams.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <mutex>
#include <string>
#include <vector>

using at::Tensor;
using OptTensor = std::optional<Tensor>;
using PackedPtr = c10::intrusive_ptr<LinearPackedParamsBase>;
using Scalars = c10::List<std::optional<at::Scalar>>;

namespace {

auto& onednn_linear() {
  static auto op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("mkldnn::_linear_pointwise", "")
      .typed<Tensor(const Tensor&, const Tensor&, const OptTensor&, c10::string_view, Scalars,
                    std::optional<c10::string_view>)>();
  return op;
}

auto& onednn_linear_add() {
  static auto op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("mkldnn::_linear_pointwise", "binary")
      .typed<Tensor(const Tensor&, const Tensor&, const Tensor&, const OptTensor&, c10::string_view)>();
  return op;
}

auto& onednn_reorder() {
  static auto op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("mkldnn::_reorder_linear_weight", "")
      .typed<Tensor(const Tensor&, std::optional<int64_t>)>();
  return op;
}

constexpr int64_t kBlockingRows = 16;  // as prepared_linear._BLOCKING_ROWS

// One projection, dispatched as PreparedLinear does (prepared_linear.py).
struct Linear {
  Tensor weight_t;  // (in, out) float; undefined for int8
  Tensor bias;      // (out,) or undefined
  PackedPtr packed;  // fbgemm int8 weights, or null
  bool onednn_ok = false;  // large enough for oneDNN's blocked layout at 2+ rows
  bool threaded_ok = false;  // ... and at one row when several threads run
  Tensor blocked;  // oneDNN layout, made at the first product that uses it

  OptTensor opt_bias() const { return bias.defined() ? OptTensor(bias) : std::nullopt; }

  const Tensor* use_blocked(const Tensor& x, std::mutex& lock) {
    if (packed || !onednn_ok) return nullptr;
    if (x.size(0) < 2 && !(threaded_ok && at::get_num_threads() > 1)) return nullptr;
    std::lock_guard<std::mutex> guard(lock);  // two searches may share one step
    if (!blocked.defined()) blocked = onednn_reorder().call(weight_t.t(), kBlockingRows);
    return &blocked;
  }

  Tensor operator()(const Tensor& x, std::mutex& lock) {  // x (N, in) -> (N, out)
    if (packed) return packed->apply_dynamic(x, /*reduce_range=*/true);
    if (auto* w = use_blocked(x, lock)) return onednn_linear().call(x, *w, opt_bias(), "none", Scalars(), std::nullopt);
    return bias.defined() ? at::addmm(bias, x, weight_t) : at::mm(x, weight_t);
  }

  Tensor add(const Tensor& x, const Tensor& residual, std::mutex& lock) {  // residual + self(x)
    if (auto* w = use_blocked(x, lock)) return onednn_linear_add().call(x, residual, *w, opt_bias(), "add");
    return at::add(residual, (*this)(x, lock));
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

}  // namespace

struct DecodeStep : torch::CustomClassHolder {
  Tensor embedding;  // (V, D)
  Tensor positions;  // (P, D)
  double embed_scale, query_scale;
  int64_t n_heads;
  bool pre_norm;
  std::string activation;
  std::vector<Linear> linears;  // per layer: qkv, self_out, cross_q, cross_out, fc1, fc2; then the output
  std::vector<Norm> norms;  // per layer: self, cross, ffn; then the final norm of pre-norm models
  Tensor zero;  // (1, 1, 1): the additive bias of attention without one
  std::mutex lock;

  DecodeStep(Tensor embedding, double embed_scale, Tensor positions, int64_t n_heads, bool pre_norm,
             std::string activation, double query_scale)
      : embedding(std::move(embedding)), positions(std::move(positions)), embed_scale(embed_scale),
        query_scale(query_scale), n_heads(n_heads), pre_norm(pre_norm), activation(std::move(activation)),
        zero(at::zeros({1, 1, 1}, this->embedding.options())) {
    TORCH_CHECK(this->activation == "relu" || this->activation == "silu" || this->activation == "gelu",
                "unknown activation ", this->activation);
  }

  void add_linear(Tensor weight_t, OptTensor bias, bool onednn_ok, bool threaded_ok) {
    Linear linear;
    linear.weight_t = std::move(weight_t);
    linear.bias = bias.value_or(Tensor());
    linear.onednn_ok = onednn_ok;
    linear.threaded_ok = threaded_ok;
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

  // q (B*H, 1, dh) x keys_t (B*H, dh, n) -> bias + query_scale * q keys_t (B*H, 1, n); `bias` is
  // `zero` (1, 1, 1) where there is none. The float models' scale is already in their query weights.
  Tensor scores(const Tensor& q, const Tensor& keys_t, const Tensor& bias) const {
    const bool no_bias = bias.is_same(zero);
    if (query_scale == 1.0) return no_bias ? at::bmm(q, keys_t) : at::baddbmm(bias, q, keys_t);
    return at::baddbmm(bias, q, keys_t, no_bias ? 0.0 : 1.0, query_scale);
  }

  Tensor norm(const Tensor& x, const Norm& n) const {
    return at::layer_norm(x, {x.size(-1)}, n.weight, n.bias, n.eps);
  }

  // tokens (B,) at position `pos`; per layer the self-attention buffers (B, H, capacity, dh) with
  // room for pos + 1, the cross keys (B*H, dh, S) and values (B*H, S, dh); bias (B*H, 1, S) or None.
  // Returns [logits (B, V)], then the cross-attention (B, L, H, S) with need_cross, then the
  // self-attention (B, L, H, pos + 1) with need_self.
  std::vector<Tensor> run(Tensor tokens, std::vector<Tensor> self_k, std::vector<Tensor> self_v,
                          std::vector<Tensor> keys_t, std::vector<Tensor> values, OptTensor bias,
                          int64_t pos, bool need_cross, bool need_self) {
    at::NoGradGuard no_grad;
    const int64_t L = static_cast<int64_t>(self_k.size());
    TORCH_CHECK(static_cast<int64_t>(linears.size()) == 6 * L + 1 && static_cast<int64_t>(norms.size()) >= 3 * L &&
                self_v.size() == self_k.size() && keys_t.size() == self_k.size() && values.size() == self_k.size(),
                "DecodeStep: the cache does not match the prepared layers");
    const int64_t B = tokens.size(0), D = embedding.size(1), H = n_heads, dh = D / H, BH = B * H, n = pos + 1;
    Tensor x = at::add(positions.select(0, pos), embedding.index_select(0, tokens), embed_scale);  // (B, D)
    std::vector<Tensor> cross_weights, self_weights;
    for (int64_t i = 0; i < L; ++i) {
      Linear* lin = &linears[6 * i];
      const Norm* nm = &norms[3 * i];
      const int64_t capacity = self_k[i].size(2);
      // self-attention over the cached positions and this one
      Tensor h = pre_norm ? norm(x, nm[0]) : x;
      Tensor qkv = lin[0](h, lock).view({B, 3, H, dh});
      self_k[i].select(2, pos).copy_(qkv.select(1, 1));  // cache (B, H, capacity, dh)
      self_v[i].select(2, pos).copy_(qkv.select(1, 2));
      Tensor q = qkv.select(1, 0).reshape({BH, 1, dh});  // (B*H, 1, dh)
      Tensor keys = self_k[i].view({BH, capacity, dh}).narrow(1, 0, n);  // (B*H, n, dh)
      Tensor probs = at::_softmax(scores(q, keys.transpose(1, 2), zero), -1, false);  // (B*H, 1, n)
      if (need_self) self_weights.push_back(probs);
      Tensor context = at::bmm(probs, self_v[i].view({BH, capacity, dh}).narrow(1, 0, n));  // (B*H, 1, dh)
      x = lin[1].add(context.view({B, D}), x, lock);
      if (!pre_norm) x = norm(x, nm[0]);
      // cross-attention
      h = pre_norm ? norm(x, nm[1]) : x;
      q = lin[2](h, lock).view({BH, 1, dh});
      probs = at::_softmax(scores(q, keys_t[i], bias ? *bias : zero), -1, false);  // (B*H, 1, S)
      if (need_cross) cross_weights.push_back(probs);
      context = at::bmm(probs, values[i]);  // (B*H, 1, dh)
      x = lin[3].add(context.view({B, D}), x, lock);
      if (!pre_norm) x = norm(x, nm[1]);
      // feed-forward
      h = pre_norm ? norm(x, nm[2]) : x;
      x = lin[5].add(lin[4].activated(h, activation, lock), x, lock);
      if (!pre_norm) x = norm(x, nm[2]);
    }
    if (static_cast<int64_t>(norms.size()) > 3 * L) x = norm(x, norms[3 * L]);
    std::vector<Tensor> out{linears[6 * L](x, lock)};  // logits (B, V)
    if (need_cross) out.push_back(per_row(cross_weights, B));  // (B, L, H, S)
    if (need_self) out.push_back(per_row(self_weights, B));  // (B, L, H, n)
    return out;
  }

  // L tensors (B*H, 1, N) -> (B, L, H, N)
  Tensor per_row(const std::vector<Tensor>& weights, int64_t B) const {
    const int64_t L = static_cast<int64_t>(weights.size()), N = weights[0].size(-1);
    return at::stack(weights).view({L, B, n_heads, N}).transpose(0, 1);
  }
};

TORCH_LIBRARY(nmt_desktop, m) {
  m.class_<DecodeStep>("DecodeStep")
      .def(torch::init<Tensor, double, Tensor, int64_t, bool, std::string, double>())
      .def("add_linear", &DecodeStep::add_linear)
      .def("add_linear_int8", &DecodeStep::add_linear_int8)
      .def("add_norm", &DecodeStep::add_norm)
      .def("run", &DecodeStep::run);
}
