// The decoder's single-position step (core/decoding/backends/fused_step.py) in C++ over the same prepared tensors.
//
// The Python fused step costs ~30 tensor operations per layer, each a few microseconds of
// interpreter and binding overhead before the kernel runs; at batch 1 on a small model (and always
// with int8 weights, whose products are short) that overhead is most of the step. Here the
// projections are the same ATen calls (addmm / oneDNN / fbgemm products, as prepared_linear.py
// dispatches them) and everything between them (embedding, both attentions for the one new
// position, residual adds, layer norms) is the hand-written loops of one_query.h over buffers
// allocated once per step. Results equal the Python step's to float rounding (tests/core/
// test_backends.py). Built by core/decoding/backends/native_library.py, used by the compiled backend
// (core/decoding/backends/compiled_step.py); without it the Python backend runs.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/native/quantized/PackedParams.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include "one_query.h"
#include "prepared_ops.h"

#include <mutex>
#include <string>
#include <vector>

using at::Tensor;
using OptTensor = std::optional<Tensor>;
using PackedPtr = c10::intrusive_ptr<LinearPackedParamsBase>;
using prepared::Linear;
using prepared::Norm;

struct DecodeStep : torch::CustomClassHolder, prepared::Weights {
  Tensor embedding;  // (V, D)
  Tensor positions;  // (P, D)
  double embed_scale, query_scale;
  int64_t n_heads;
  bool pre_norm;
  std::string activation;
  // linears: per layer qkv, self_out, cross_q, cross_out, fc1, fc2; then the output
  // norms: per layer self, cross, ffn; then the final norm of pre-norm models

  DecodeStep(Tensor embedding, double embed_scale, Tensor positions, int64_t n_heads, bool pre_norm,
             std::string activation, double query_scale)
      : embedding(std::move(embedding)), positions(std::move(positions)), embed_scale(embed_scale),
        query_scale(query_scale), n_heads(n_heads), pre_norm(pre_norm), activation(std::move(activation)) {
    prepared::check_activation(this->activation);
  }

  static void norm(const Tensor& x, Tensor& out, const Norm& n) { prepared::norm_rows(x, out, n); }

  void residual(Tensor& x, const Tensor& y, const Norm& n) const { prepared::residual(x, y, n, pre_norm); }

  const Tensor& sublayer_input(const Tensor& x, Tensor& h, const Norm& n) const {
    return prepared::sublayer_input(x, h, n, pre_norm);
  }

  // tokens (B,) at position `pos`; per layer the self-attention buffers (B, H, capacity, dh) with
  // room for pos + 1, the cross keys (B*H, dh, S) and values (B*H, S, dh); bias (B*H, 1, S) or None.
  // row_pos (B,) int64 or None: each row's own position instead of `pos` (continuous batching, where rows
  // joined at different steps: core/decoding/continuous.py); a row attends to its own pos + 1 cached
  // positions only, and `pos` is then the largest of them. row_src (B,) int64 or None: each row's own source
  // length, so that a row reads only the first row_src[b] of the S source positions (the rest is another
  // row's width: no bias needed for it, and its cross-attention there is 0).
  // Returns [logits (B, V)], then the cross-attention (B, L, H, S) with need_cross, then the
  // self-attention (B, L, H, pos + 1) with need_self (zeros past a row's own position), then the final
  // state (B, D) the output projection read with need_hidden (the queries and keys of kNN-MT, core/adaptation).
  std::vector<Tensor> run(Tensor tokens, std::vector<Tensor> self_k, std::vector<Tensor> self_v,
                          std::vector<Tensor> keys_t, std::vector<Tensor> values, OptTensor bias,
                          int64_t pos, bool need_cross, bool need_self, bool need_hidden, OptTensor row_pos,
                          OptTensor row_src) {
    at::NoGradGuard no_grad;
    const int64_t L = static_cast<int64_t>(self_k.size());
    TORCH_CHECK(static_cast<int64_t>(linears.size()) == 6 * L + 1 && static_cast<int64_t>(norms.size()) >= 3 * L &&
                self_v.size() == self_k.size() && keys_t.size() == self_k.size() && values.size() == self_k.size(),
                "DecodeStep: the cache does not match the prepared layers");
    const int64_t B = tokens.size(0), V = embedding.size(0), D = embedding.size(1), H = n_heads, dh = D / H;
    const Tensor row_pos_c = row_pos ? row_pos->contiguous() : Tensor();
    const int64_t* rows_at = row_pos_c.defined() ? row_pos_c.data_ptr<int64_t>() : nullptr;
    if (rows_at) {
      TORCH_CHECK(row_pos_c.numel() == B, "DecodeStep: ", row_pos_c.numel(), " row positions for ", B, " rows");
      pos = 0;
      for (int64_t b = 0; b < B; ++b) {
        TORCH_CHECK(rows_at[b] >= 0, "DecodeStep: a row's position is negative");
        pos = std::max(pos, rows_at[b]);
      }
    }
    auto pos_of = [&](int64_t b) { return rows_at ? rows_at[b] : pos; };
    const int64_t n = pos + 1, S = keys_t[0].size(2);
    const Tensor row_src_c = row_src ? row_src->contiguous() : Tensor();
    const int64_t* sources = row_src_c.defined() ? row_src_c.data_ptr<int64_t>() : nullptr;
    if (sources) {
      TORCH_CHECK(row_src_c.numel() == B, "DecodeStep: ", row_src_c.numel(), " source lengths for ", B, " rows");
      for (int64_t b = 0; b < B; ++b)
        TORCH_CHECK(sources[b] >= 1 && sources[b] <= S, "DecodeStep: a row's source length ", sources[b],
                    " is outside 1..", S);
    }
    TORCH_CHECK(pos < positions.size(0), "DecodeStep: position ", pos, " is past the model's ", positions.size(0));
    tokens = tokens.contiguous();
    const int64_t* token = tokens.data_ptr<int64_t>();
    Tensor x = at::empty({B, D}, embedding.options());  // the residual stream
    for (int64_t b = 0; b < B; ++b) {
      TORCH_CHECK(token[b] >= 0 && token[b] < V, "DecodeStep: token id ", token[b], " is outside the vocabulary");
      const float* e = embedding.data_ptr<float>() + token[b] * D;
      const float* p = positions.data_ptr<float>() + pos_of(b) * D;
      float* out = x.data_ptr<float>() + b * D;
      const float scale = static_cast<float>(embed_scale);
      for (int64_t d = 0; d < D; ++d) out[d] = p[d] + scale * e[d];
    }
    Tensor h = at::empty({B, D}, x.options()), context = at::empty({B, D}, x.options());
    Tensor cross_out = at::empty({need_cross ? B : 0, L, H, S}, x.options());  // (B, L, H, S)
    Tensor self_out = at::empty({need_self ? B : 0, L, H, n}, x.options());  // (B, L, H, n)
    const float qs = static_cast<float>(query_scale);
    const Tensor bias_c = bias ? bias->contiguous() : Tensor();
    for (int64_t i = 0; i < L; ++i) {
      Linear* lin = &linears[6 * i];
      const Norm* nm = &norms[3 * i];
      TORCH_CHECK(self_k[i].is_contiguous() && self_v[i].is_contiguous() && self_k[i].size(2) > pos,
                  "DecodeStep: the self-attention cache must be contiguous with room for position ", pos);
      const int64_t capacity = self_k[i].size(2);
      // self-attention over the cached positions and this one
      Tensor qkv = lin[0](sublayer_input(x, h, nm[0]), lock).contiguous();  // (B, 3D): q | k | v
      float* keys = self_k[i].data_ptr<float>();
      float* vals = self_v[i].data_ptr<float>();
      at::parallel_for(0, B * H, 16, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(need_self ? 0 : n);
        for (int64_t bh = begin; bh < end; ++bh) {
          const int64_t b = bh / H, head = bh % H, at = pos_of(b);
          const float* q = qkv.data_ptr<float>() + b * 3 * D + head * dh;
          float* k_rows = keys + bh * capacity * dh;  // (capacity, dh)
          float* v_rows = vals + bh * capacity * dh;
          std::copy(q + D, q + D + dh, k_rows + at * dh);
          std::copy(q + 2 * D, q + 2 * D + dh, v_rows + at * dh);
          float* probs = need_self ? self_out.data_ptr<float>() + ((b * L + i) * H + head) * n : scratch.data();
          one_query::attend(q, k_rows, v_rows, at + 1, dh, qs, probs, context.data_ptr<float>() + b * D + head * dh);
          if (need_self) std::fill(probs + at + 1, probs + n, 0.f);  // past this row's own position
        }
      });
      residual(x, lin[1](context, lock), nm[0]);
      // cross-attention
      Tensor q_cross = lin[2](sublayer_input(x, h, nm[1]), lock).contiguous();  // (B, D)
      const Tensor kt = keys_t[i].contiguous(), vc = values[i].contiguous();
      at::parallel_for(0, B * H, 16, [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(need_cross ? 0 : S);
        for (int64_t bh = begin; bh < end; ++bh) {
          const int64_t b = bh / H, head = bh % H, width = sources ? sources[b] : S;
          float* probs = need_cross ? cross_out.data_ptr<float>() + ((b * L + i) * H + head) * S : scratch.data();
          one_query::attend_transposed(q_cross.data_ptr<float>() + b * D + head * dh,
                                       kt.data_ptr<float>() + bh * dh * S,
                                       bias_c.defined() ? bias_c.data_ptr<float>() + bh * S : nullptr,
                                       vc.data_ptr<float>() + bh * S * dh, width, S, dh, qs, probs,
                                       context.data_ptr<float>() + b * D + head * dh);
          if (need_cross) std::fill(probs + width, probs + S, 0.f);  // another row's width
        }
      });
      residual(x, lin[3](context, lock), nm[1]);
      // feed-forward
      residual(x, lin[5](lin[4].activated(sublayer_input(x, h, nm[2]), activation, lock), lock), nm[2]);
    }
    if (static_cast<int64_t>(norms.size()) > 3 * L) norm(x, x, norms[3 * L]);
    std::vector<Tensor> out{linears[6 * L](x, lock)};  // logits (B, V)
    if (need_cross) out.push_back(cross_out);
    if (need_self) out.push_back(self_out);
    if (need_hidden) out.push_back(x);
    return out;
  }
};

TORCH_LIBRARY(nmt_desktop, m) {
  auto step = m.class_<DecodeStep>("DecodeStep")
                  .def(torch::init<Tensor, double, Tensor, int64_t, bool, std::string, double>())
                  .def("run", &DecodeStep::run);
  prepared::with_weights(step);
}
