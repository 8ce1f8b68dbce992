// Hand-written loops for the parts of a decoding step that see one new position per row.
//
// At batch 1 these are tiny (a head's query against <= a few hundred keys of 64 floats, a layer
// norm over one row of d_model floats), so as ATen calls they cost their dispatch, shape checks and
// allocations rather than their arithmetic. Here they run over raw float pointers into tensors the
// caller allocated once per step. Same formulas as core/fused_step.py (scores, then the query
// scale, plus the padding bias; softmax; weighted sum of values; layer norm with biased variance),
// summed in another order: results agree with the ATen step to float rounding, not to the bit.
// Reductions use `omp simd` (built with -fopenmp-simd: vector code, no OpenMP runtime); on x86-64
// the entry points are also compiled for AVX2 and AVX-512 and picked at load time (target_clones),
// so one library serves any x86-64 machine (the sum order, and so the last bits, follow the width).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ONE_QUERY_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ONE_QUERY_CLONES
#endif
#if defined(__GNUC__)
#define ONE_QUERY_INLINE inline __attribute__((always_inline))  // into each clone, at its width
#else
#define ONE_QUERY_INLINE inline
#endif

namespace one_query {

ONE_QUERY_INLINE float dot(const float* a, const float* b, int64_t n) {
  // 16 partial sums (one vector register), summed as a tree: `omp simd reduction` would end with 16
  // dependent scalar adds per call, which for dh = 64 cost more than the products.
  constexpr int64_t W = 16;
  float acc[W] = {};
  int64_t i = 0;
  for (; i + W <= n; i += W)
#pragma omp simd
    for (int64_t l = 0; l < W; ++l) acc[l] += a[i + l] * b[i + l];
  for (int64_t width = W / 2; width > 0; width /= 2)
#pragma omp simd
    for (int64_t l = 0; l < width; ++l) acc[l] += acc[l + width];
  float sum = acc[0];
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// y += a * x over n floats
ONE_QUERY_INLINE void axpy(float a, const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// exp(x) for x <= 0 (softmax scores minus their maximum) without a library call, so that loops over
// it vectorise: Cephes' expf (range reduction by ln 2, degree-6 polynomial; ~1e-7 relative error, as
// ATen's vectorised exp); below -88 (and for -inf, a padded position) it is exactly 0.
ONE_QUERY_INLINE float exp_nonpositive(float x) {
  x = x > -88.f ? x : -88.f;  // (a ternary, not std::max: GCC vectorises it in omp simd loops)
  const float magic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (x * 1.44269504088896341f + magic) - magic;  // round(x / ln 2), >= -127
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n ln 2, in two parts
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n; 0 (the float 0) at n = -127
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

// Softmax of n scores in place (-inf scores get 0; at least one score must be finite).
ONE_QUERY_INLINE void softmax(float* s, int64_t n) {
  float top = -INFINITY;
#pragma omp simd reduction(max : top)
  for (int64_t i = 0; i < n; ++i) top = s[i] > top ? s[i] : top;
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) {
    s[i] = exp_nonpositive(s[i] - top);
    sum += s[i];
  }
  const float inv = 1.f / sum;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) s[i] *= inv;
}

// probs (n) -> context (dh) = sum_j probs[j] * values[j], values (n, dh) rows
ONE_QUERY_INLINE void weighted_values(const float* probs, const float* values, int64_t n, int64_t dh, float* context) {
  std::fill(context, context + dh, 0.f);
  for (int64_t j = 0; j < n; ++j) axpy(probs[j], values + j * dh, context, dh);
}

// One head's query q (dh) against n cached keys and values, both (n, dh) rows:
// probs (n) = softmax(scale * q.k_j), context (dh) = sum_j probs_j v_j.
static ONE_QUERY_CLONES void attend(const float* q, const float* keys, const float* values, int64_t n,
                                    int64_t dh, float scale, float* probs, float* context) {
  for (int64_t j = 0; j < n; ++j) probs[j] = scale * dot(q, keys + j * dh, dh);
  softmax(probs, n);
  weighted_values(probs, values, n, dh, context);
}

// As `attend` with keys stored transposed, keys_t (dh, stride), of which the first S columns are read, and an
// additive bias (S) or null.
static ONE_QUERY_CLONES void attend_transposed(const float* q, const float* keys_t, const float* bias,
                                               const float* values, int64_t S, int64_t stride, int64_t dh,
                                               float scale, float* probs, float* context) {
  std::fill(probs, probs + S, 0.f);
  for (int64_t d = 0; d < dh; ++d) axpy(q[d], keys_t + d * stride, probs, S);
  for (int64_t s = 0; s < S; ++s) probs[s] = scale * probs[s] + (bias ? bias[s] : 0.f);
  softmax(probs, S);
  weighted_values(probs, values, S, dh, context);
}

// out (D) = layer_norm(x) with weight / bias (D) or null; out may be x.
static ONE_QUERY_CLONES void layer_norm(const float* x, float* out, const float* weight, const float* bias, int64_t D,
                                        float eps) {
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < D; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(D);
  float squares = 0.f;
#pragma omp simd reduction(+ : squares)
  for (int64_t i = 0; i < D; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const float rstd = 1.f / std::sqrt(squares / static_cast<float>(D) + eps);
#pragma omp simd
  for (int64_t i = 0; i < D; ++i) out[i] = (x[i] - mean) * rstd;
  if (weight) {
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) out[i] *= weight[i];
  }
  if (bias) {
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) out[i] += bias[i];
  }
}

}  // namespace one_query
