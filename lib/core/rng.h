/* rng.h - xoshiro256** for input data: fast, and seeded from getrandom so
 * a kernel cannot predict its inputs */
#ifndef AO_RNG_H
#define AO_RNG_H

#include <math.h>
#include <stdint.h>

struct ao_rng {
    uint64_t s[4];
};

static inline uint64_t ao_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t ao_rng_next(struct ao_rng *r)
{
    uint64_t *s = r->s, out = ao_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ao_rng_rotl(s[3], 45);
    return out;
}

/* uniform in (0, 1) */
static inline double ao_rng_unit(struct ao_rng *r)
{
    return ((double)(ao_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* two standard normals (Box-Muller) */
static inline void ao_rng_normal2(struct ao_rng *r, double *a, double *b)
{
    double u = ao_rng_unit(r), v = ao_rng_unit(r), m = sqrt(-2.0 * log(u));
    *a = m * cos(6.283185307179586 * v);
    *b = m * sin(6.283185307179586 * v);
}

#endif
