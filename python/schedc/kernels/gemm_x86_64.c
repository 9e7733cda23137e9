/* schedc's f32 matmul and convolution for x86-64 with AVX2 and FMA, or AVX-512, linked into
 * IREE's llvm-cpu executables (schedc.kernels, schedc.ir.cpu_ops).
 *
 * IREE calls an entry point once per workgroup, each computing one tile of the result
 * (schedc.decisions.cpu_config.gemm_tiles and conv_tiles). Both keep a 6 x NR tile of results
 * (NR two vectors: 16 columns in AVX2, 32 in AVX-512) in 12 accumulators, two FMAs per
 * broadcast element:
 * - the matmul C = A B (row-major, per batch) runs its tile in slices of KC along K; each
 *   NR-column panel of B's slice is packed (zero past N) and met by 6-row strips of A. A last
 *   panel of VL columns or fewer takes a 6 x VL tile. Rows past the edge repeat the last row and
 *   columns past it are zero; neither is stored.
 * - the NCHW convolution is vectorised along its output channels (below).
 *
 * Embedded-ELF rules (IREE's custom_dispatch/cpu/embedded sample): no libc, no globals, no
 * thread-local state; small stack buffers only (16.5 KB here).
 */
#include <immintrin.h>
#include <stddef.h>

/* The vector the tiles are made of: AVX-512's 16 floats where the object is built for it
 * (schedc.kernels.kernel_isa: a target with AVX-512F), else AVX2's 8. A tile is MR rows of NR =
 * two vectors: 12 accumulators either way. The epilogues and the max pool stay in AVX2
 * (memory-bound, one code for both); the depthwise convolution takes 16 columns at once in
 * AVX-512 before its 8-wide AVX2 steps. */
#if defined(__AVX512F__)
#define VL 16
typedef __m512 vf;
#define v_loadu _mm512_loadu_ps
#define v_storeu _mm512_storeu_ps
#define v_set1 _mm512_set1_ps
#define v_fma _mm512_fmadd_ps
#define v_add _mm512_add_ps
#define v_zero _mm512_setzero_ps
#else
#define VL 8
typedef __m256 vf;
#define v_loadu _mm256_loadu_ps
#define v_storeu _mm256_storeu_ps
#define v_set1 _mm256_set1_ps
#define v_fma _mm256_fmadd_ps
#define v_add _mm256_add_ps
#define v_zero _mm256_setzero_ps
#endif
#define MR 6
#define NR (2 * VL)
#define KC (4096 / NR) /* B's slice packed on the stack: 16 KB */
#define PANEL 16       /* a convolution filter's panel of output channels (schedc.ir.cpu_ops.CONV_PANEL) */

/* The end of a tile of `size` from `start`, cut at `total`. */
static inline size_t end_of(size_t start, size_t size, size_t total) { return start + size < total ? start + size : total; }

static inline void store_row(float *restrict c, vf lo, vf hi, int first) {
  if (!first) {
    lo = v_add(v_loadu(c), lo);
    hi = v_add(v_loadu(c + VL), hi);
  }
  v_storeu(c, lo);
  v_storeu(c + VL, hi);
}

/* Epilogues: what follows the product in the model, applied to a finished tile so that IREE
 * need not run it as a dispatch of its own. The bias is added first (per column of a matmul,
 * per output channel of a convolution), then the activation. Each activation repeats the
 * arithmetic of the linalg body it replaces (schedc.ir.cpu_ops.EPILOGUES), op for op, with erf
 * as the rational approximation Eigen and XLA use for f32 (within 2e-7 of it on [-4, 4], and
 * +-1 outside, where f32's erf is +-1). */
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_GELU_ERF = 2 };

static inline __m256 erf_ps(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(4.0f)), _mm256_set1_ps(-4.0f));
  __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(-2.72614225801306e-10f), _mm256_set1_ps(2.77068142495902e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.10102402082508e-06f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-5.69250639462346e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-7.34990630326855e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.95459980854025e-03f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-1.60960333262415e-02f));
  p = _mm256_mul_ps(x, p);
  __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(-1.45660718464996e-05f), _mm256_set1_ps(-2.13374055278905e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.68282697438203e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-7.37332916720468e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.42647390514189e-02f));
  return _mm256_div_ps(p, q);
}

static inline __m256 activate(__m256 x, int act) {
  if (act == ACT_RELU) /* x > 0 ? x : 0, NaN kept: max returns its second operand on NaN */
    return _mm256_max_ps(_mm256_setzero_ps(), x);
  if (act == ACT_GELU_ERF) { /* x * ((erf(x / 1.41421354) + 1) * 0.5) */
    __m256 e = erf_ps(_mm256_div_ps(x, _mm256_set1_ps(1.41421354f)));
    return _mm256_mul_ps(x, _mm256_mul_ps(_mm256_add_ps(e, _mm256_set1_ps(1.0f)), _mm256_set1_ps(0.5f)));
  }
  return x;
}

/* row[0:n] = act(row[0:n] + bias[0:n]), or + one bias for the whole row where `along` is 0
 * (bias NULL: none); the tail through a buffer. */
static void epilogue_row(float *restrict row, const float *restrict bias, size_t along, size_t n, int act) {
  __m256 one = bias && !along ? _mm256_broadcast_ss(bias) : _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 v = _mm256_loadu_ps(row + j);
    if (bias) v = _mm256_add_ps(v, along ? _mm256_loadu_ps(bias + j) : one);
    _mm256_storeu_ps(row + j, activate(v, act));
  }
  if (j < n) {
    float t[8] __attribute__((aligned(32))) = {0};
    for (size_t i = j; i < n; ++i) t[i - j] = row[i] + (bias ? bias[along ? i : 0] : 0.0f);
    _mm256_store_ps(t, activate(_mm256_load_ps(t), act));
    for (size_t i = j; i < n; ++i) row[i] = t[i - j];
  }
}

/* The MR x NR tile's 12 accumulators, c<row><half>. */
#define ACCUMULATORS                                                                                       \
  vf c00 = v_zero(), c01 = v_zero(), c10 = v_zero(), c11 = v_zero(), c20 = v_zero(), c21 = v_zero(); \
  vf c30 = v_zero(), c31 = v_zero(), c40 = v_zero(), c41 = v_zero(), c50 = v_zero(), c51 = v_zero()

/* The tile's accumulators into t[MR][NR], row by row. */
#define STORE_TILE(t)                                                                                        \
  do {                                                                                                       \
    v_storeu(t, c00), v_storeu(t + VL, c01), v_storeu(t + NR, c10), v_storeu(t + NR + VL, c11);               \
    v_storeu(t + 2 * NR, c20), v_storeu(t + 2 * NR + VL, c21), v_storeu(t + 3 * NR, c30);                    \
    v_storeu(t + 3 * NR + VL, c31), v_storeu(t + 4 * NR, c40), v_storeu(t + 4 * NR + VL, c41);               \
    v_storeu(t + 5 * NR, c50), v_storeu(t + 5 * NR + VL, c51);                                               \
  } while (0)

/* One k of the tile: B's NR values at b0 (the first vector) and b1 (the second), row r's value
 * of A at x<r>. */
#define FMA_TILE(b0p, b1p, x0, x1, x2, x3, x4, x5)                                     \
  do {                                                                                 \
    vf b0 = v_loadu(b0p), b1 = v_loadu(b1p), x;                                        \
    x = v_set1(*(x0)); c00 = v_fma(x, b0, c00); c01 = v_fma(x, b1, c01);               \
    x = v_set1(*(x1)); c10 = v_fma(x, b0, c10); c11 = v_fma(x, b1, c11);               \
    x = v_set1(*(x2)); c20 = v_fma(x, b0, c20); c21 = v_fma(x, b1, c21);               \
    x = v_set1(*(x3)); c30 = v_fma(x, b0, c30); c31 = v_fma(x, b1, c31);               \
    x = v_set1(*(x4)); c40 = v_fma(x, b0, c40); c41 = v_fma(x, b1, c41);               \
    x = v_set1(*(x5)); c50 = v_fma(x, b0, c50); c51 = v_fma(x, b1, c51);               \
  } while (0)

/* One k of the tile's first vector alone (a tile of VL columns or fewer). */
#define FMA_HALF(b0p, x0, x1, x2, x3, x4, x5)                                                           \
  do {                                                                                                  \
    vf b0 = v_loadu(b0p);                                                                               \
    c00 = v_fma(v_set1(*(x0)), b0, c00), c10 = v_fma(v_set1(*(x1)), b0, c10);                         \
    c20 = v_fma(v_set1(*(x2)), b0, c20), c30 = v_fma(v_set1(*(x3)), b0, c30);                         \
    c40 = v_fma(v_set1(*(x4)), b0, c40), c50 = v_fma(v_set1(*(x5)), b0, c50);                         \
  } while (0)

/* One k of either: FMA_HALF where `half`, else FMA_TILE with B's second vector `second` floats on.
 * Only in functions inlined where `half` is a constant (ALWAYS_INLINE, called by WITH_HALF):
 * a branch left in the loop halves its speed. */
#define FMA_STEP(half, b, second, x0, x1, x2, x3, x4, x5)  \
  do {                                                     \
    if (half)                                              \
      FMA_HALF(b, x0, x1, x2, x3, x4, x5);                 \
    else                                                   \
      FMA_TILE(b, (b) + (second), x0, x1, x2, x3, x4, x5); \
  } while (0)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
/* call(..., half) with `half` a constant in each branch */
#define WITH_HALF(half, call, ...) \
  do {                             \
    if (half)                      \
      call(__VA_ARGS__, 1);        \
    else                           \
      call(__VA_ARGS__, 0);        \
  } while (0)

/* c[0:MR, 0:NR] (+)= a[r][0:kc] . bp[0:kc][0:NR], row r of A at a[r]; `half`: only c[0:MR, 0:VL],
 * bp[0:kc][0:VL] (the last panel, when it is VL columns or fewer; c is then a buffer, stored whole). */
static inline void micro(size_t kc, const float *const a[MR], const float *restrict bp, float *restrict c, size_t ldc,
                         int first, int half) {
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
  ACCUMULATORS;
  if (half) {
    for (size_t k = 0; k < kc; ++k) FMA_HALF(bp + k * VL, a0 + k, a1 + k, a2 + k, a3 + k, a4 + k, a5 + k);
    v_storeu(c, c00), v_storeu(c + ldc, c10), v_storeu(c + 2 * ldc, c20);
    v_storeu(c + 3 * ldc, c30), v_storeu(c + 4 * ldc, c40), v_storeu(c + 5 * ldc, c50);
    return;
  }
  for (size_t k = 0; k < kc; ++k) FMA_TILE(bp + k * NR, bp + k * NR + VL, a0 + k, a1 + k, a2 + k, a3 + k, a4 + k, a5 + k);
  store_row(c, c00, c01, first);
  store_row(c + ldc, c10, c11, first);
  store_row(c + 2 * ldc, c20, c21, first);
  store_row(c + 3 * ldc, c30, c31, first);
  store_row(c + 4 * ldc, c40, c41, first);
  store_row(c + 5 * ldc, c50, c51, first);
}

/* packed[0:kc][0:width] = B[k0:k0+kc][j0:j0+width] (width NR, or VL for a last narrow panel),
 * zero past column j0 + nr. */
static void pack_panel(float *restrict packed, const float *restrict b, size_t n, size_t k0, size_t kc, size_t j0, size_t nr,
                       size_t width) {
  for (size_t k = 0; k < kc; ++k) {
    const float *row = b + (k0 + k) * n + j0;
    if (nr == NR) {
      v_storeu(packed + k * NR, v_loadu(row));
      v_storeu(packed + k * NR + VL, v_loadu(row + VL));
    } else {
      for (size_t j = 0; j < width; ++j) packed[k * width + j] = j < nr ? row[j] : 0.0f;
    }
  }
}

/* C[m0:m1, n0:n1] = act(A[m0:m1, :] B[:, n0:n1] + bias), the bias a vector along the columns
 * (bias_rows 0) or the rows (1), or NULL for none. */
static void tile(const float *restrict a, const float *restrict b, float *restrict c, const float *restrict bias,
                 size_t bias_rows, int act, size_t M, size_t N, size_t K, size_t MB, size_t NB, size_t tile_m, size_t tile_n) {
  size_t m0 = tile_m * MB, n0 = tile_n * NB, m1 = end_of(m0, MB, M), n1 = end_of(n0, NB, N);
  float packed[KC * NR] __attribute__((aligned(64)));
  float edge[MR * NR] __attribute__((aligned(64)));
  for (size_t k0 = 0; k0 < K; k0 += KC) {
    size_t kc = end_of(k0, KC, K) - k0;
    int first = k0 == 0;
    for (size_t j0 = n0; j0 < n1; j0 += NR) {
      size_t nr = end_of(j0, NR, n1) - j0, width = nr <= VL ? VL : NR;
      pack_panel(packed, b, N, k0, kc, j0, nr, width);
      for (size_t i0 = m0; i0 < m1; i0 += MR) {
        size_t mr = end_of(i0, MR, m1) - i0;
        const float *rows[MR];
        for (size_t i = 0; i < MR; ++i) rows[i] = a + (i0 + (i < mr ? i : mr - 1)) * K + k0;
        if (mr == MR && nr == NR) {
          micro(kc, rows, packed, c + i0 * N + j0, N, first, 0);
          continue;
        }
        micro(kc, rows, packed, edge, NR, 1, width == VL);
        for (size_t i = 0; i < mr; ++i)
          for (size_t j = 0; j < nr; ++j) {
            float *out = c + (i0 + i) * N + j0 + j;
            *out = first ? edge[i * NR + j] : *out + edge[i * NR + j];
          }
      }
    }
  }
  if (bias || act != ACT_NONE) /* the tile is still in cache */
    for (size_t i = m0; i < m1; ++i)
      epilogue_row(c + i * N + n0, !bias ? NULL : bias_rows ? bias + i : bias + n0, !bias_rows, n1 - n0, act);
}

/* Each binding arrives as MLIR's expanded 1-D memref: base, aligned, offset, size, stride. */
#define BINDING(type, name) type *restrict name##_base, type *restrict name, size_t name##_offset, size_t name##_size, size_t name##_stride
#define UNUSED(name) (void)name##_base, (void)name##_size, (void)name##_stride

/* C[batch] = A[batch] B[batch]: A of M x K, B of K x N. */
void schedc_sgemm_workgroup(BINDING(const float, a), BINDING(const float, b), BINDING(float, c), size_t M, size_t N, size_t K,
                            size_t MB, size_t NB, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(a), UNUSED(b), UNUSED(c);
  tile(a + a_offset + batch * M * K, b + b_offset + batch * K * N, c + c_offset + batch * M * N, NULL, 0, ACT_NONE, M, N, K,
       MB, NB, tile_m, tile_n);
}

/* C[batch] = act(A[batch] B[batch] + bias): the bias a vector of N (bias_rows 0) or of M (1). */
void schedc_sgemm_bias_workgroup(BINDING(const float, a), BINDING(const float, b), BINDING(const float, bias),
                                 BINDING(float, c), size_t M, size_t N, size_t K, size_t MB, size_t NB, size_t bias_rows,
                                 size_t act, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(a), UNUSED(b), UNUSED(bias), UNUSED(c);
  tile(a + a_offset + batch * M * K, b + b_offset + batch * K * N, c + c_offset + batch * M * N, bias + bias_offset, bias_rows,
       (int)act, M, N, K, MB, NB, tile_m, tile_n);
}

/* A convolution vectorised along its output channels, as oneDNN's direct convolutions are: the
 * filter comes packed at compile time into panels of 16 output channels, [panel][k][16] with k =
 * (channel, i, j) and zero past OC, and each 6-pixel strip's tile of NR channels (one panel in
 * AVX2, two in AVX-512; a last one of VL channels or fewer in one vector) runs all of K in its
 * accumulators, the image's elements broadcast straight from it (no patches packed or
 * gathered). Then the tile is stored transposed into the NCHW output. Strips past the last pixel
 * repeat it, and neither they nor channels past OC are stored.
 *
 * A workgroup's tile is MB output channels (whole panels) by NB output pixels (whole strips).
 * A tile's second vector of channels is, from its first, the panel's second half (AVX2) or the
 * next panel (AVX-512): SECOND_VECTOR. */
#define SECOND_VECTOR(K) (VL < PANEL ? (size_t)VL : (K) * PANEL)
/* t[MR][NR] = a strip's tile: pixel r's window at px[r] (rows `row` apart, columns DW), the
 * panel's taps from f. */
ALWAYS_INLINE void conv_strip(float *restrict t, const float *const px[MR], const float *restrict f, size_t second, size_t C,
                              size_t plane, size_t KH, size_t KW, size_t row, size_t DW, int half) {
  const float *p0x = px[0], *p1x = px[1], *p2x = px[2], *p3x = px[3], *p4x = px[4], *p5x = px[5];
  ACCUMULATORS;
  for (size_t c = 0; c < C; ++c)
    for (size_t i = 0; i < KH; ++i)
      for (size_t j = 0; j < KW; ++j, f += PANEL) {
        size_t at = c * plane + i * row + j * DW;
        FMA_STEP(half, f, second, p0x + at, p1x + at, p2x + at, p3x + at, p4x + at, p5x + at);
      }
  STORE_TILE(t);
}

static void conv(const float *restrict img, const float *restrict packed, float *restrict o, const float *restrict bias,
                 int act, size_t C, size_t H, size_t W, size_t OC, size_t KH, size_t KW, size_t SH, size_t SW, size_t DH,
                 size_t DW, size_t OH, size_t OW, size_t MB, size_t NB, size_t tile_m, size_t tile_n) {
  size_t N = OH * OW, K = C * KH * KW, plane = H * W, second = SECOND_VECTOR(K);
  size_t m0 = tile_m * MB, n0 = tile_n * NB, m1 = end_of(m0, MB, OC), n1 = end_of(n0, NB, N);
  for (size_t p0 = m0; p0 < m1; p0 += NR) {
    const float *panel = packed + p0 * K; /* panel p0 / 16: K x 16 */
    size_t channels = end_of(p0, NR, m1) - p0, half = channels <= VL; /* half: one vector holds them */
    for (size_t s0 = n0; s0 < n1; s0 += MR) {
      size_t pixels = end_of(s0, MR, n1) - s0;
      const float *px[MR];
      for (size_t r = 0; r < MR; ++r) {
        size_t n = s0 + (r < pixels ? r : pixels - 1);
        px[r] = img + (n / OW) * SH * W + (n % OW) * SW;
      }
      float t[MR * NR] __attribute__((aligned(64)));
      WITH_HALF(half, conv_strip, t, px, panel, second, C, plane, KH, KW, DH * W, DW);
      if (bias || act != ACT_NONE) /* rows of NR channels: bias[p0:p0+channels] along them (zero past OC is never stored) */
        for (size_t r = 0; r < pixels; ++r) epilogue_row(t + r * NR, bias ? bias + p0 : NULL, 1, channels, act);
      for (size_t m = 0; m < channels; ++m)
        for (size_t r = 0; r < pixels; ++r) o[(p0 + m) * N + s0 + r] = t[r * NR + m];
    }
  }
}

void schedc_sconv_workgroup(BINDING(const float, image), BINDING(const float, packed), BINDING(float, out), size_t C,
                            size_t H, size_t W, size_t OC, size_t KH, size_t KW, size_t SH, size_t SW, size_t DH, size_t DW,
                            size_t OH, size_t OW, size_t MB, size_t NB, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(packed), UNUSED(out);
  conv(image + image_offset + batch * C * H * W, packed + packed_offset, out + out_offset + batch * OC * OH * OW, NULL,
       ACT_NONE, C, H, W, OC, KH, KW, SH, SW, DH, DW, OH, OW, MB, NB, tile_m, tile_n);
}

/* The convolution, then act(out + bias), the bias a vector of OC. */
void schedc_sconv_bias_workgroup(BINDING(const float, image), BINDING(const float, packed), BINDING(const float, bias),
                                 BINDING(float, out), size_t C, size_t H, size_t W, size_t OC, size_t KH, size_t KW,
                                 size_t SH, size_t SW, size_t DH, size_t DW, size_t OH, size_t OW, size_t MB, size_t NB,
                                 size_t act, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(packed), UNUSED(bias), UNUSED(out);
  conv(image + image_offset + batch * C * H * W, packed + packed_offset, out + out_offset + batch * OC * OH * OW,
       bias + bias_offset, (int)act, C, H, W, OC, KH, KW, SH, SW, DH, DW, OH, OW, MB, NB, tile_m, tile_n);
}

/* The same convolution on NHWC images into an NHWC output, for channels-last modules (between
 * neighbours in NHWC, where IREE cancels the transposes around it): the filter comes packed as
 * above but with k = (i, j, channel), so that a pixel's channels are read in order, and a strip's
 * tile is stored as it is, a pixel's NR channels side by side. The image comes
 * unpadded (H x W): PT rows above it and PL columns left of it (and whatever the output's size
 * needs below and right) read as zeros, so no padded copy of it is made. */
#define ZC 256 /* the zeros a padding pixel reads, per chunk of channels */
/* t[MR][NR] = a strip's tile: pixel r's window at row top[r] - PT and column left[r] - PL of the
 * image, the panel's taps from f. */
ALWAYS_INLINE void conv_nhwc_strip(float *restrict t, const float *restrict img, const float *restrict f, size_t second,
                                   const float *zeros, const size_t top[MR], const size_t left[MR], size_t C, size_t H,
                                   size_t W, size_t KH, size_t KW, size_t DH, size_t DW, size_t PT, size_t PL, int half) {
  ACCUMULATORS;
  for (size_t i = 0; i < KH; ++i)
    for (size_t j = 0; j < KW; ++j, f += C * PANEL) {
      const float *q[MR];
      int inside = 1;
      for (size_t r = 0; r < MR; ++r) {
        size_t y = top[r] + i * DH - PT, x = left[r] + j * DW - PL; /* past the edge: wraps above H or W */
        q[r] = y < H && x < W ? img + (y * W + x) * C : NULL;
        inside &= q[r] != NULL;
      }
      if (inside) {
        const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3], *q4 = q[4], *q5 = q[5];
        for (size_t c = 0; c < C; ++c) FMA_STEP(half, f + c * PANEL, second, q0 + c, q1 + c, q2 + c, q3 + c, q4 + c, q5 + c);
        continue;
      }
      for (size_t c0 = 0; c0 < C; c0 += ZC) {
        size_t count = C - c0 < ZC ? C - c0 : ZC;
        const float *u[MR];
        for (size_t r = 0; r < MR; ++r) u[r] = q[r] ? q[r] + c0 : zeros;
        const float *u0 = u[0], *u1 = u[1], *u2 = u[2], *u3 = u[3], *u4 = u[4], *u5 = u[5];
        for (size_t c = 0; c < count; ++c)
          FMA_STEP(half, f + (c0 + c) * PANEL, second, u0 + c, u1 + c, u2 + c, u3 + c, u4 + c, u5 + c);
      }
    }
  STORE_TILE(t);
}

static void conv_nhwc(const float *restrict img, const float *restrict packed, float *restrict o, const float *restrict bias,
                      int act, size_t C, size_t H, size_t W, size_t OC, size_t KH, size_t KW, size_t SH, size_t SW,
                      size_t DH, size_t DW, size_t OH, size_t OW, size_t PT, size_t PL, size_t MB, size_t NB, size_t tile_m,
                      size_t tile_n) {
  size_t N = OH * OW, K = C * KH * KW, second = SECOND_VECTOR(K);
  size_t m0 = tile_m * MB, n0 = tile_n * NB, m1 = end_of(m0, MB, OC), n1 = end_of(n0, NB, N);
  float zeros[ZC] __attribute__((aligned(32)));
  for (size_t z = 0; z < ZC; ++z) zeros[z] = 0.0f;
  for (size_t p0 = m0; p0 < m1; p0 += NR) {
    const float *panel = packed + p0 * K; /* panel p0 / 16: K x 16 */
    size_t channels = end_of(p0, NR, m1) - p0, half = channels <= VL; /* half: one vector holds them */
    for (size_t s0 = n0; s0 < n1; s0 += MR) {
      size_t pixels = end_of(s0, MR, n1) - s0;
      size_t top[MR], left[MR]; /* each row's window corner, PT and PL added (unsigned: no negatives) */
      for (size_t r = 0; r < MR; ++r) {
        size_t n = s0 + (r < pixels ? r : pixels - 1);
        top[r] = (n / OW) * SH, left[r] = (n % OW) * SW;
      }
      float t[MR * NR] __attribute__((aligned(64)));
      WITH_HALF(half, conv_nhwc_strip, t, img, panel, second, zeros, top, left, C, H, W, KH, KW, DH, DW, PT, PL);
      if (bias || act != ACT_NONE)
        for (size_t r = 0; r < pixels; ++r) epilogue_row(t + r * NR, bias ? bias + p0 : NULL, 1, channels, act);
      for (size_t r = 0; r < pixels; ++r) {
        float *row = o + (s0 + r) * OC + p0;
        if (channels == NR) {
          v_storeu(row, v_loadu(t + r * NR));
          v_storeu(row + VL, v_loadu(t + r * NR + VL));
        } else {
          for (size_t m = 0; m < channels; ++m) row[m] = t[r * NR + m];
        }
      }
    }
  }
}

void schedc_sconv_nhwc_workgroup(BINDING(const float, image), BINDING(const float, packed), BINDING(float, out), size_t C,
                                 size_t H, size_t W, size_t OC, size_t KH, size_t KW, size_t SH, size_t SW, size_t DH,
                                 size_t DW, size_t OH, size_t OW, size_t PT, size_t PL, size_t MB, size_t NB, size_t tile_m,
                                 size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(packed), UNUSED(out);
  conv_nhwc(image + image_offset + batch * C * H * W, packed + packed_offset, out + out_offset + batch * OC * OH * OW, NULL,
            ACT_NONE, C, H, W, OC, KH, KW, SH, SW, DH, DW, OH, OW, PT, PL, MB, NB, tile_m, tile_n);
}

/* The NHWC convolution, then act(out + bias), the bias a vector of OC. */
void schedc_sconv_nhwc_bias_workgroup(BINDING(const float, image), BINDING(const float, packed), BINDING(const float, bias),
                                      BINDING(float, out), size_t C, size_t H, size_t W, size_t OC, size_t KH, size_t KW,
                                      size_t SH, size_t SW, size_t DH, size_t DW, size_t OH, size_t OW, size_t PT, size_t PL,
                                      size_t MB, size_t NB, size_t act, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(packed), UNUSED(bias), UNUSED(out);
  conv_nhwc(image + image_offset + batch * C * H * W, packed + packed_offset, out + out_offset + batch * OC * OH * OW,
            bias + bias_offset, (int)act, C, H, W, OC, KH, KW, SH, SW, DH, DW, OH, OW, PT, PL, MB, NB, tile_m, tile_n);
}

/* Max pooling of stride 1 over NCHW planes: out[c][oh][ow] is the maximum of the image's
 * elements in rows oh - PT .. oh - PT + KH - 1 and columns ow - PL .. ow - PL + KW - 1 that lie
 * inside it. torch-mlir pads a max pool's image with -inf, and the maximum of -inf with x is x,
 * so skipping the padding computes what the padded pool does, and no padded copy of the image
 * is made. Separably: each image row's maxima over the window's columns (the `across` pass,
 * kept for the KH output rows that read it in a ring of KH rows of OW on the stack), then each
 * output row's maximum over its rows of those. As arith.maximumf (the pool's body), a window
 * with a NaN gives NaN: the vector passes keep a mask of the NaNs they met beside the running
 * maximum. Vectors go 8 columns at a time, the last one ending at the row's end (overlapping its
 * neighbour); the columns at the edges of the `across` pass, whose windows leave the image, one
 * by one. A workgroup's tile is CB channels. */
#define POOL_RING 2048 /* floats: KH x OW at most (schedc.decisions.cpu_config.pool_kernel) */
#define POOL_WINDOW 16 /* KH and KW at most (the same) */
static inline float max_nan(float acc, float x) { return acc != acc ? acc : (x != x || x > acc ? x : acc); }

/* out[0:n] = the maximum over rows[0 .. count - 1] (each n floats) of each column; n >= 8 */
static inline __m256 max3(__m256 a, __m256 b, __m256 c) {
  __m256 nan = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q)),
                            _mm256_cmp_ps(c, c, _CMP_UNORD_Q));
  return _mm256_or_ps(_mm256_max_ps(_mm256_max_ps(a, b), c), nan);
}

static void max_rows(float *restrict out, const float *const *rows, size_t count, size_t n) {
  if (count == 3) { /* a 3-wide window, the common one: its three rows at once */
    const float *a = rows[0], *b = rows[1], *c = rows[2];
    for (size_t s = 0; s < n; s += 8) {
      size_t at = s + 8 <= n ? s : n - 8;
      _mm256_storeu_ps(out + at, max3(_mm256_loadu_ps(a + at), _mm256_loadu_ps(b + at), _mm256_loadu_ps(c + at)));
    }
    return;
  }
  for (size_t s = 0; s < n; s += 8) {
    size_t at = s + 8 <= n ? s : n - 8;
    __m256 acc = _mm256_set1_ps(-__builtin_inff()), nan = _mm256_setzero_ps();
    for (size_t j = 0; j < count; ++j) {
      __m256 x = _mm256_loadu_ps(rows[j] + at);
      acc = _mm256_max_ps(x, acc); /* acc where x is NaN: the mask keeps it */
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
    _mm256_storeu_ps(out + at, _mm256_or_ps(acc, nan));
  }
}

void schedc_smaxpool_workgroup(BINDING(const float, image), BINDING(float, out), size_t C, size_t H, size_t W, size_t KH,
                               size_t KW, size_t PT, size_t PL, size_t OH, size_t OW, size_t CB, size_t tile_m,
                               size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(out);
  (void)tile_n;
  const float *img = image + image_offset + batch * C * H * W;
  float *o = out + out_offset + batch * C * OH * OW;
  size_t c0 = tile_m * CB, c1 = c0 + CB < C ? c0 + CB : C;
  /* the columns whose window is inside the image: PL <= ow and ow - PL + KW <= W */
  size_t lo = PL < OW ? PL : OW, hi = W + PL >= KW ? W + PL - KW + 1 : 0;
  if (hi > OW) hi = OW;
  if (hi < lo + 8) hi = lo; /* fewer than 8: all one by one */
  float ring[POOL_RING];
  for (size_t c = c0; c < c1; ++c) {
    const float *plane = img + c * H * W;
    /* image rows whose `across` maxima are in the ring: row r in slot r % KH, kept by counting
     * (no division in the loops): `slot` is made's, `first` that of the window's first row */
    size_t made = 0, slot = 0, first = 0, top = 0;
    for (size_t oh = 0; oh < OH; ++oh) {
      size_t r0 = oh >= PT ? oh - PT : 0, r1 = oh + KH - PT < H ? oh + KH - PT : H; /* rows [r0, r1) */
      for (; top < r0; ++top) first = first + 1 == KH ? 0 : first + 1;
      for (; made < r1; ++made, slot = slot + 1 == KH ? 0 : slot + 1) {
        const float *src = plane + made * W, *columns[POOL_WINDOW];
        float *across = ring + slot * OW;
        for (size_t j = 0; j < KW; ++j) columns[j] = src + lo - PL + j;
        if (hi > lo) max_rows(across + lo, columns, KW, hi - lo);
        for (size_t ow = 0; ow < OW; ow = ow + 1 == lo && hi > lo ? hi : ow + 1) {
          size_t q0 = ow >= PL ? ow - PL : 0, q1 = ow + KW - PL < W ? ow + KW - PL : W; /* columns [q0, q1) */
          float acc = -__builtin_inff();
          for (size_t q = q0; q < q1; ++q) acc = max_nan(acc, src[q]);
          across[ow] = acc;
        }
      }
      float *row = o + c * OH * OW + oh * OW;
      const float *rows[POOL_WINDOW];
      for (size_t r = 0, at = first; r < r1 - r0; ++r, at = at + 1 == KH ? 0 : at + 1) rows[r] = ring + at * OW;
      if (OW >= 8)
        max_rows(row, rows, r1 - r0, OW);
      else
        for (size_t ow = 0; ow < OW; ++ow) {
          float acc = -__builtin_inff();
          for (size_t r = 0; r < r1 - r0; ++r) acc = max_nan(acc, rows[r][ow]);
          row[ow] = acc;
        }
    }
  }
}

/* Depthwise convolution (one filter of KH x KW per channel, dilation 1, stride S of 1 or 2 along
 * both axes), reading its NCHW image unpadded: the zero padding (PT rows above, PL columns left)
 * is the taps it skips. For each output row, each of the window's rows inside the image and each
 * of its columns: the image row from the column on (every S-th element), times the tap, added to
 * the output columns whose tap is inside the image, 8 at a time (at stride 2 two vectors'
 * even elements), then one by one. The sums start from zero (IREE adds an initial value after
 * it). A workgroup's tile is CB channels. */
#if VL == 16
/* s[0], s[2], ..., s[30]: AVX-512's 16 even elements of two vectors */
static inline __m512 even_elements_16(const float *s) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_loadu_ps(s), even, _mm512_loadu_ps(s + 16));
}
#endif

static inline __m256 even_elements(const float *s) {
  __m256 a = _mm256_loadu_ps(s), b = _mm256_loadu_ps(s + 8);
  __m256 mixed = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
}

void schedc_sdepthwise_workgroup(BINDING(const float, image), BINDING(const float, filter), BINDING(float, out), size_t C,
                                 size_t H, size_t W, size_t KH, size_t KW, size_t S, size_t PT, size_t PL, size_t OH,
                                 size_t OW, size_t CB, size_t tile_m, size_t tile_n, size_t batch) {
  UNUSED(image), UNUSED(filter), UNUSED(out);
  (void)tile_n;
  const float *img = image + image_offset + batch * C * H * W;
  const float *taps = filter + filter_offset;
  float *o = out + out_offset + batch * C * OH * OW;
  size_t c0 = tile_m * CB, c1 = c0 + CB < C ? c0 + CB : C;
  for (size_t c = c0; c < c1; ++c) {
    const float *plane = img + c * H * W, *w = taps + c * KH * KW;
    for (size_t oh = 0; oh < OH; ++oh) {
      float *row = o + c * OH * OW + oh * OW;
      for (size_t ow = 0; ow < OW; ++ow) row[ow] = 0.0f;
      for (size_t i = 0; i < KH; ++i) {
        if (oh * S + i < PT || oh * S + i - PT >= H) continue; /* a row of padding */
        const float *src = plane + (oh * S + i - PT) * W;
        for (size_t j = 0; j < KW; ++j) {
          /* output columns ow with 0 <= S ow + j - PL < W: [q0, q1) */
          size_t q0 = j < PL ? (PL - j + S - 1) / S : 0;
          if (W + PL <= j) continue;
          size_t q1 = (W - 1 + PL - j) / S + 1;
          if (q1 > OW) q1 = OW;
          if (q0 >= q1) continue;
          const float *s = src + q0 * S + j - PL; /* the image element of output column q0 */
          float *d = row + q0;
          float tap = w[i * KW + j];
          __m256 t = _mm256_set1_ps(tap);
          size_t n = q1 - q0, k = 0;
          if (S == 1) {
#if VL == 16
            for (; k + 16 <= n; k += 16) v_storeu(d + k, v_fma(v_set1(tap), v_loadu(s + k), v_loadu(d + k)));
#endif
            for (; k + 8 <= n; k += 8) _mm256_storeu_ps(d + k, _mm256_fmadd_ps(t, _mm256_loadu_ps(s + k), _mm256_loadu_ps(d + k)));
          } else if (S == 2) { /* 16 elements a vector: while they stay inside the row */
            size_t inside = W - (size_t)(s - src);
#if VL == 16
            for (; k + 16 <= n && 2 * k + 32 <= inside; k += 16)
              v_storeu(d + k, v_fma(v_set1(tap), even_elements_16(s + 2 * k), v_loadu(d + k)));
#endif
            for (; k + 8 <= n && 2 * k + 16 <= inside; k += 8)
              _mm256_storeu_ps(d + k, _mm256_fmadd_ps(t, even_elements(s + 2 * k), _mm256_loadu_ps(d + k)));
          }
          for (; k < n; ++k) d[k] += tap * s[k * S];
        }
      }
    }
  }
}
