/* cuda_pipeline.h - CUDA's asynchronous copies to shared memory
 * (__pipeline_memcpy_async, cp.async on the GPU) on the host emulation
 * (emu.h).  Each thread's copies wait in groups and land only when a
 * __pipeline_wait_prior lets their group go, as late as the GPU may land
 * them: a kernel that reads a stage before waiting for it reads the NaNs
 * that shared memory starts with here, not a lucky early copy. */
#ifndef AO_EMU_PIPELINE_H
#define AO_EMU_PIPELINE_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

struct emu_copy {
    void *dst;
    const void *src;
    size_t bytes, zeros;
};
/* per thread: the copies of the group not yet committed, and the
 * committed groups, oldest first */
static std::vector<std::vector<emu_copy>> emu_open(1024);
static std::vector<std::deque<std::vector<emu_copy>>> emu_groups(1024);

static inline void __pipeline_memcpy_async(void *dst, const void *src, size_t size, size_t zfill = 0)
{
    if (!(size == 4 || size == 8 || size == 16) || zfill > size || (uintptr_t)dst % size ||
        (zfill < size && (uintptr_t)src % size))
        abort(); /* what the GPU refuses: a misaligned or odd-sized copy */
    emu_open[emu_thread_id()].push_back({dst, src, size - zfill, zfill});
}

static inline void __pipeline_commit()
{
    unsigned t = emu_thread_id();
    emu_groups[t].push_back(emu_open[t]);
    emu_open[t].clear();
}

static inline void __pipeline_wait_prior(size_t prior)
{
    unsigned t = emu_thread_id();
    while (emu_groups[t].size() > prior) {
        for (const emu_copy &c : emu_groups[t].front()) {
            memcpy(c.dst, c.src, c.bytes);
            memset((char *)c.dst + c.bytes, 0, c.zeros);
        }
        emu_groups[t].pop_front();
    }
}

#endif
