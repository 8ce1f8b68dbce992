// The per-step tensor work of the searches (core/decoding/search.py) as single calls: the best tokens of each
// row by log-probability, beam search's 2K best expansions per sentence, and the reordering of the
// self-attention cache to the surviving rows.
//
// At batch 1 with a vocabulary of a few thousand, torch.topk and the ~15 small tensor operations
// around it cost more than the arithmetic. Here a row's top-k is taken on the logits (the
// log-softmax keeps their order) in one scan with a vectorised block maximum (only blocks that can
// hold a new entry are looked at element by element), and only the k winners are turned into
// log-probabilities (logit - logsumexp of the row); the full (R, V) log-softmax is never written.
// The cache reorder moves the filled positions of the rows that change, in place. Results equal
// the Python code in selection.py to float rounding (tests/core/decoding/backends/test_backends.py); among equal
// values the lower index ranks first.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "one_query.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

using at::Tensor;

namespace {

constexpr int64_t kBlock = 32;  // floats whose maximum is compared with the k-th best at once

// The k largest of row[0..V) in descending order into values / indices (k <= V), leaving out the
// indices skip_a and skip_b (-1: none). Among equal values the lower index ranks first; NaN never
// enters (it compares false).
static ONE_QUERY_CLONES void top_k_row(const float* row, int64_t V, int64_t k, float* values, int64_t* indices,
                                      int64_t skip_a = -1, int64_t skip_b = -1) {
  int64_t filled = 0;
  float worst = -std::numeric_limits<float>::infinity();  // the k-th value once `filled == k`
  auto offer = [&](float x, int64_t i) {
    if ((filled == k && !(x > worst)) || i == skip_a || i == skip_b) return;
    int64_t pos = filled < k ? filled++ : k - 1;  // drop the last when full
    while (pos > 0 && x > values[pos - 1]) {  // keep earlier (lower-index) equals first
      values[pos] = values[pos - 1];
      indices[pos] = indices[pos - 1];
      --pos;
    }
    values[pos] = x;
    indices[pos] = i;
    if (filled == k) worst = values[k - 1];
  };
  int64_t i = 0;
  for (; i < V && filled < k; ++i) offer(row[i], i);
  for (; i + kBlock <= V; i += kBlock) {
    float top = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : top)
    for (int64_t j = 0; j < kBlock; ++j) top = row[i + j] > top ? row[i + j] : top;
    if (top > worst)
      for (int64_t j = 0; j < kBlock; ++j) offer(row[i + j], i + j);
  }
  for (; i < V; ++i) offer(row[i], i);
  for (int64_t j = filled; j < k; ++j) {  // fewer than k ids left after the skipped ones
    values[j] = -std::numeric_limits<float>::infinity();
    indices[j] = 0;
  }
}

// log(sum(exp(row))) over V floats
static ONE_QUERY_CLONES float logsumexp(const float* row, int64_t V) {
  float top = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : top)
  for (int64_t i = 0; i < V; ++i) top = row[i] > top ? row[i] : top;
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < V; ++i) sum += one_query::exp_nonpositive(row[i] - top);
  return top + std::log(sum);
}

// Each row's k best tokens by log-probability, with `pad_id` and `eos_id` (-1: none) never chosen
// (selection.step_logprobs sets them to -inf): logits (R, V) -> log-probs and ids (R, k), descending.
std::tuple<Tensor, Tensor> top_logprobs(const Tensor& logits, int64_t k, int64_t pad_id, int64_t eos_id) {
  TORCH_CHECK(logits.dim() == 2 && logits.device().is_cpu(), "top_logprobs: logits must be (R, V) on the CPU");
  const Tensor x = logits.to(at::kFloat).contiguous();
  const int64_t R = x.size(0), V = x.size(1);
  TORCH_CHECK(k >= 1 && k <= V, "top_logprobs: k = ", k, " for rows of ", V);
  Tensor values = at::empty({R, k}, x.options());
  Tensor indices = at::empty({R, k}, x.options().dtype(at::kLong));
  float* out = values.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* row = x.data_ptr<float>() + r * V;
    top_k_row(row, V, k, out + r * k, indices.data_ptr<int64_t>() + r * k, pad_id, eos_id);
    const float lse = logsumexp(row, V);
    for (int64_t j = 0; j < k; ++j) out[r * k + j] -= lse;
  }
  return {values, indices};
}

// selection.beam_candidates from logits (B*K, V) and the beam scores (B, K), with the masks of
// `top_logprobs`: the best min(2K, K*n) expansions of each sentence, best first, as scores, flat
// indices beam * V + token and token log-probs (B, 2K), and each row's best k_alt tokens' ids and
// log-probs (B*K, k_alt); n = min(2K, V) candidates per row, as in the Python function.
std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> beam_candidates(const Tensor& logits, const Tensor& scores,
                                                                  int64_t k_alt, int64_t pad_id, int64_t eos_id) {
  const int64_t B = scores.size(0), K = scores.size(1), V = logits.size(-1);
  TORCH_CHECK(logits.dim() == 2 && logits.size(0) == B * K,
              "beam_candidates: logits must be (B*K, V) for scores (B, K)");
  const int64_t n = std::min(2 * K, V), m = std::max(n, k_alt), top = std::min(2 * K, K * n);
  auto [row_lp, row_ids] = top_logprobs(logits, m, pad_id, eos_id);  // (B*K, m)
  const Tensor beam_scores = scores.to(at::kFloat).contiguous();
  const float* beam_score = beam_scores.data_ptr<float>();
  const float* lp = row_lp.data_ptr<float>();
  const int64_t* ids = row_ids.data_ptr<int64_t>();
  Tensor top_scores = at::empty({B, top}, row_lp.options()), top_lps = at::empty({B, top}, row_lp.options());
  Tensor top_idx = at::empty({B, top}, row_ids.options());
  std::vector<float> cand(K * n), best(top);
  std::vector<int64_t> order(top);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < K * n; ++c)  // candidate c = beam * n + rank
      cand[c] = beam_score[b * K + c / n] + lp[(b * K + c / n) * m + c % n];
    top_k_row(cand.data(), K * n, top, best.data(), order.data());
    for (int64_t j = 0; j < top; ++j) {
      const int64_t beam = order[j] / n, row = (b * K + beam) * m + order[j] % n;
      top_scores.data_ptr<float>()[b * top + j] = best[j];
      top_idx.data_ptr<int64_t>()[b * top + j] = beam * V + ids[row];
      top_lps.data_ptr<float>()[b * top + j] = lp[row];
    }
  }
  return {top_scores, top_idx, top_lps, row_ids.narrow(1, 0, k_alt), row_lp.narrow(1, 0, k_alt)};
}

// The order in which to overwrite `moved` rows (row r takes row src[r]) so that each row is read
// before it is overwritten; rows caught in a cycle (e.g. two rows swapping) are left in `cyclic`.
void copy_order(const int64_t* src, std::vector<int64_t> moved, int64_t B, std::vector<int64_t>& order,
                std::vector<int64_t>& cyclic) {
  std::vector<int64_t> readers(B, 0);  // moved rows still to copy that read each row
  for (int64_t r : moved) ++readers[src[r]];
  for (bool progress = true; progress && !moved.empty();) {
    progress = false;
    for (size_t j = 0; j < moved.size();) {
      const int64_t r = moved[j];
      if (readers[r] == 0) {  // nobody still needs row r's current content
        order.push_back(r);
        --readers[src[r]];
        moved.erase(moved.begin() + static_cast<std::ptrdiff_t>(j));
        progress = true;
      } else {
        ++j;
      }
    }
  }
  cyclic = std::move(moved);
}

// KVCache.reorder of the self-attention buffers (B, H, capacity, dh), in place: row r takes the first
// `length` positions of row indices[r] (R <= B rows). Only rows that change are moved, each once,
// in an order that reads every row before overwriting it; rows in a cycle go through a scratch copy.
// Returns the buffers' first R rows.
std::vector<Tensor> reorder_filled(std::vector<Tensor> buffers, const Tensor& indices, int64_t length) {
  const Tensor rows = indices.to(at::kLong).contiguous();
  const int64_t R = rows.size(0);
  const int64_t* src = rows.data_ptr<int64_t>();
  TORCH_CHECK(!buffers.empty(), "reorder_filled: no buffers");
  const int64_t B = buffers[0].size(0);
  TORCH_CHECK(R <= B, "reorder_filled: ", R, " rows from ", B);
  std::vector<int64_t> moved, order, cyclic;
  for (int64_t r = 0; r < R; ++r) {
    TORCH_CHECK(src[r] >= 0 && src[r] < B, "reorder_filled: row ", src[r], " of ", B);
    if (src[r] != r) moved.push_back(r);
  }
  copy_order(src, moved, B, order, cyclic);
  std::vector<float> scratch;
  for (Tensor& buf : buffers) {
    TORCH_CHECK(buf.dim() == 4 && buf.size(0) == B && buf.is_contiguous() && buf.scalar_type() == at::kFloat &&
                length <= buf.size(2),
                "reorder_filled: buffers must be contiguous float (B, H, capacity, dh) with >= ", length, " positions");
    const int64_t H = buf.size(1), row_size = H * buf.size(2) * buf.size(3), filled = length * buf.size(3);
    float* data = buf.data_ptr<float>();
    auto copy_row = [&](float* to, const float* from, int64_t to_stride, int64_t from_stride) {
      for (int64_t h = 0; h < H; ++h) std::memcpy(to + h * to_stride, from + h * from_stride, sizeof(float) * filled);
    };
    for (int64_t r : order) copy_row(data + r * row_size, data + src[r] * row_size, row_size / H, row_size / H);
    scratch.resize(cyclic.size() * H * filled);
    for (size_t j = 0; j < cyclic.size(); ++j)
      copy_row(scratch.data() + j * H * filled, data + src[cyclic[j]] * row_size, filled, row_size / H);
    for (size_t j = 0; j < cyclic.size(); ++j)
      copy_row(data + cyclic[j] * row_size, scratch.data() + j * H * filled, row_size / H, filled);
    buf = buf.narrow(0, 0, R);
  }
  return buffers;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(nmt_desktop, m) {
  m.def("top_logprobs(Tensor logits, int k, int pad_id, int eos_id) -> (Tensor, Tensor)", &top_logprobs);
  m.def("beam_candidates(Tensor logits, Tensor scores, int k_alt, int pad_id, int eos_id) "
        "-> (Tensor, Tensor, Tensor, Tensor, Tensor)",
        &beam_candidates);
  m.def("reorder_filled(Tensor[] buffers, Tensor indices, int length) -> Tensor[]", &reorder_filled);
}
