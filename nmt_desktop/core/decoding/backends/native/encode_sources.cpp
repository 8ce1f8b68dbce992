// The encoder over packed sources, and every decoder layer's cross-attention keys and values of its output, in one
// call (core/decoding/backends/compiled_encoder.py).
//
// The Python encoder costs ~60 tensor operations for a small model's three layers, a few microseconds each of
// interpreter and dispatch before the kernel runs: encoding one sentence took 1.0 ms, against 0.3 ms a sentence in
// length-sorted batches of 32 (benchmarks/RESULTS.md, issue 43). A server's continuous batching encodes the few
// sentences that arrived between two steps, in arrival order, so it paid that overhead and the padding to the
// longest of them. Here the sources are packed one after another (no padding: the projections see only real
// tokens), the products are the ATen calls of prepared_ops.h, and the self-attention of each source and head is
// one_query.h's loop over that source's own keys. Results equal the Python encoder's to float rounding
// (tests/core/decoding/backends/test_compiled_encoder.py). The call runs without Python's interpreter lock, as
// every custom-class call does.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include "one_query.h"
#include "prepared_ops.h"

#include <string>
#include <vector>

using at::Tensor;
using prepared::Linear;
using prepared::Norm;

struct EncodeSources : torch::CustomClassHolder, prepared::Weights {
  Tensor embedding;  // (V, D) the source embedding
  Tensor positions;  // (P, D)
  double embed_scale, query_scale;
  int64_t n_heads, encoder_layers;
  bool pre_norm;
  std::string activation;
  // linears: per encoder layer qkv (its query rows scaled as the decoder's), out, fc1, fc2; then per decoder
  // layer the cross-attention's kv projection
  // norms: per encoder layer attention, ffn; then the encoder's final norm (pre-norm models)

  EncodeSources(Tensor embedding, double embed_scale, Tensor positions, int64_t n_heads, int64_t encoder_layers,
                bool pre_norm, std::string activation, double query_scale)
      : embedding(std::move(embedding)), positions(std::move(positions)), embed_scale(embed_scale),
        query_scale(query_scale), n_heads(n_heads), encoder_layers(encoder_layers), pre_norm(pre_norm),
        activation(std::move(activation)) {
    prepared::check_activation(this->activation);
  }

  // tokens (N,) int64: the sources one after another, no padding; lengths (B,) int64, each >= 1, summing to N.
  // Returns per decoder layer the cross keys (B*H, dh, S), then per decoder layer the values (B*H, S, dh), S the
  // longest source; zeros past a source's own length (never read: the step's row_src).
  std::vector<Tensor> run(Tensor tokens, Tensor lengths) {
    at::NoGradGuard no_grad;
    const int64_t L = encoder_layers, decoder_layers = static_cast<int64_t>(linears.size()) - 4 * L;
    TORCH_CHECK(L >= 1 && decoder_layers >= 1 && static_cast<int64_t>(norms.size()) >= 2 * L,
                "EncodeSources: the prepared layers do not match");
    tokens = tokens.contiguous();
    lengths = lengths.contiguous();
    const int64_t N = tokens.size(0), B = lengths.size(0), V = embedding.size(0), D = embedding.size(1);
    const int64_t H = n_heads, dh = D / H;
    const int64_t* length = lengths.data_ptr<int64_t>();
    std::vector<int64_t> offset(B + 1, 0);
    int64_t S = 0;
    for (int64_t b = 0; b < B; ++b) {
      TORCH_CHECK(length[b] >= 1, "EncodeSources: an empty source");
      TORCH_CHECK(length[b] <= positions.size(0), "EncodeSources: a source of ", length[b],
                  " tokens is past the model's ", positions.size(0), " positions");
      offset[b + 1] = offset[b] + length[b];
      S = std::max(S, length[b]);
    }
    TORCH_CHECK(offset[B] == N, "EncodeSources: the lengths sum to ", offset[B], ", not to the ", N, " tokens");
    const int64_t* token = tokens.data_ptr<int64_t>();
    Tensor x = at::empty({N, D}, embedding.options());  // the stream, (N, D)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < length[b]; ++t) {
        const int64_t row = offset[b] + t;
        TORCH_CHECK(token[row] >= 0 && token[row] < V, "EncodeSources: token id ", token[row],
                    " is outside the vocabulary");
        const float* e = embedding.data_ptr<float>() + token[row] * D;
        const float* p = positions.data_ptr<float>() + t * D;
        float* out = x.data_ptr<float>() + row * D;
        const float scale = static_cast<float>(embed_scale);
        for (int64_t d = 0; d < D; ++d) out[d] = p[d] + scale * e[d];
      }
    Tensor h = at::empty({N, D}, x.options()), context = at::empty({N, D}, x.options());
    const float qs = static_cast<float>(query_scale);
    for (int64_t i = 0; i < L; ++i) {
      Linear* lin = &linears[4 * i];
      const Norm* nm = &norms[2 * i];
      const Tensor qkv = lin[0](prepared::sublayer_input(x, h, nm[0], pre_norm), lock).contiguous();  // (N, 3D)
      const float* all = qkv.data_ptr<float>();
      float* ctx = context.data_ptr<float>();
      at::parallel_for(0, B * H, 4, [&](int64_t begin, int64_t end) {
        std::vector<float> keys_t(dh * S), values(S * dh), probs(S);
        for (int64_t bh = begin; bh < end; ++bh) {
          const int64_t b = bh / H, head = bh % H, n = length[b], first = offset[b];
          for (int64_t t = 0; t < n; ++t) {  // this source's keys, transposed (dh, n), and values (n, dh)
            const float* k = all + (first + t) * 3 * D + D + head * dh;
            for (int64_t d = 0; d < dh; ++d) keys_t[d * n + t] = k[d];
            std::copy(k + D, k + D + dh, values.data() + t * dh);
          }
          for (int64_t t = 0; t < n; ++t)
            one_query::attend_transposed(all + (first + t) * 3 * D + head * dh, keys_t.data(), nullptr, values.data(),
                                         n, n, dh, qs, probs.data(), ctx + (first + t) * D + head * dh);
        }
      });
      prepared::residual(x, lin[1](context, lock), nm[0], pre_norm);
      prepared::residual(x, lin[3](lin[2].activated(prepared::sublayer_input(x, h, nm[1], pre_norm), activation, lock),
                                   lock), nm[1], pre_norm);
    }
    if (static_cast<int64_t>(norms.size()) > 2 * L) prepared::norm_rows(x, x, norms[2 * L]);
    std::vector<Tensor> keys(decoder_layers), vals(decoder_layers);
    for (int64_t j = 0; j < decoder_layers; ++j) {
      const Tensor kv = linears[4 * L + j](x, lock).contiguous();  // (N, 2D): k | v
      const float* all = kv.data_ptr<float>();
      keys[j] = at::zeros({B * H, dh, S}, x.options());
      vals[j] = at::zeros({B * H, S, dh}, x.options());
      float* kt = keys[j].data_ptr<float>();
      float* vs = vals[j].data_ptr<float>();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < length[b]; ++t) {
          const float* row = all + (offset[b] + t) * 2 * D;
          for (int64_t head = 0; head < H; ++head) {
            const int64_t bh = b * H + head;
            for (int64_t d = 0; d < dh; ++d) kt[(bh * dh + d) * S + t] = row[head * dh + d];
            std::copy(row + D + head * dh, row + D + (head + 1) * dh, vs + (bh * S + t) * dh);
          }
        }
    }
    keys.insert(keys.end(), vals.begin(), vals.end());
    return keys;
  }
};

TORCH_LIBRARY_FRAGMENT(nmt_desktop, m) {
  auto encoder = m.class_<EncodeSources>("EncodeSources")
                     .def(torch::init<Tensor, double, Tensor, int64_t, int64_t, bool, std::string, double>())
                     .def("run", &EncodeSources::run);
  prepared::with_weights(encoder);
}
