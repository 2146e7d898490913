/* mma.h - nvcuda::wmma on the host emulation (emu.h), for kernels that
 * use the tensor cores: here each thread of a warp holds the whole tile of
 * a fragment (the GPU spreads it over the lanes, in a layout WMMA keeps
 * opaque), so loads, products and stores are each thread's own and the
 * warp's copies agree.  Products accumulate in fp32, k in order; TF32
 * rounding is to nearest, ties away, at 10 mantissa bits, as
 * cvt.rna.tf32.f32 does.  Correctness of the index and edge logic, not
 * the tensor cores' own rounding of their sums. */
#ifndef AO_EMU_MMA_H
#define AO_EMU_MMA_H

#include <cstdint>
#include <cstring>

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K> struct shape_of;
template <int M, int N, int K> struct shape_of<matrix_a, M, N, K> {
    enum { rows = M, cols = K };
};
template <int M, int N, int K> struct shape_of<matrix_b, M, N, K> {
    enum { rows = K, cols = N };
};
template <int M, int N, int K> struct shape_of<accumulator, M, N, K> {
    enum { rows = M, cols = N };
};

template <typename Use, int M, int N, int K, typename T, typename Layout = void> struct fragment {
    enum { rows = shape_of<Use, M, N, K>::rows, cols = shape_of<Use, M, N, K>::cols,
           num_elements = rows * cols };
    typedef Layout layout;
    float x[num_elements];
};

static inline float __float_to_tf32(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) /* finite: round, then drop 13 bits */
        u = (u + 0x1000u) & 0xffffe000u;
    std::memcpy(&f, &u, 4);
    return f;
}

template <typename F> static inline void fill_fragment(F &f, float v)
{
    for (int i = 0; i < F::num_elements; i++)
        f.x[i] = v;
}

template <typename F> static inline void load_matrix_sync(F &f, const float *p, unsigned ldm)
{
    bool row = std::is_same<typename F::layout, row_major>::value;
    for (int r = 0; r < F::rows; r++)
        for (int c = 0; c < F::cols; c++)
            f.x[r * F::cols + c] = row ? p[(long)r * ldm + c] : p[(long)c * ldm + r];
}

template <typename F> static inline void store_matrix_sync(float *p, const F &f, unsigned ldm, layout_t l)
{
    for (int r = 0; r < F::rows; r++)
        for (int c = 0; c < F::cols; c++)
            (l == mem_row_major ? p[(long)r * ldm + c] : p[(long)c * ldm + r]) = f.x[r * F::cols + c];
}

template <typename D, typename A, typename B, typename C>
static inline void mma_sync(D &d, const A &a, const B &b, const C &c)
{
    float out[D::num_elements];
    for (int i = 0; i < D::rows; i++)
        for (int j = 0; j < D::cols; j++) {
            float acc = c.x[i * D::cols + j];
            for (int k = 0; k < A::cols; k++)
                acc = fmaf(a.x[i * A::cols + k], b.x[k * B::cols + j], acc);
            out[i * D::cols + j] = acc;
        }
    std::memcpy(d.x, out, sizeof out);
}
} // namespace wmma
} // namespace nvcuda

#endif
