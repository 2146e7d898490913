/* hw_counters.cuh - the GPU's hardware counters of one call, for the
 * metrics pass (issue 71; runner_proto.h AO_RUN_CMD_COUNTERS): CUPTI's
 * range profiler (CUDA 13's cupti_range_profiler.h), one user range
 * around the call, replayed by the runner as many times as the metrics
 * need passes, evaluated in this process (libnvperf_host, which CUPTI
 * loads) into four numbers in the header.
 *
 * Everything that loads a library, reads the chip or builds the
 * configuration runs in ao_hw_open, before the seccomp filter; a COUNTERS
 * command only starts, stops, decodes and evaluates.  The counters need
 * the driver's profiling permission (RmProfilingAdminOnly 0, as on the
 * lent H200: the runner is no admin).  Where any step fails, hw_status
 * says which (negative) and the planner gets the activity records alone.
 * Built and compiled here; not yet run on a GPU. */
#ifndef AO_HW_COUNTERS_CUH
#define AO_HW_COUNTERS_CUH

#include <dlfcn.h>
#include <stdlib.h>

#include "runner_proto.h"

#if defined(AO_CUPTI_LIB) && __has_include(<cupti_range_profiler.h>) && \
    __has_include(<cupti_profiler_host.h>) && __has_include(<cupti_target.h>)
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#define AO_HAVE_RANGE_PROFILER 1
#endif

/* hw_status's failures: the step that failed */
enum { AO_HW_NONE = 0, AO_HW_READY = AO_RUN_HW_READY, AO_HW_READ = AO_RUN_HW_READ, AO_HW_NO_LIBRARY = -1,
       AO_HW_NO_CHIP = -2,
       AO_HW_NO_HOST = -3, AO_HW_NO_CONFIG = -4, AO_HW_NO_ENABLE = -5, AO_HW_NO_IMAGE = -6,
       AO_HW_RUN = -7, AO_HW_DECODE = -8, AO_HW_EVALUATE = -9 };

/* runner_proto.h's AO_RUN_HW_* order */
static const char *ao_hw_names[AO_RUN_HW_METRICS] = {
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "lts__t_sector_hit_rate.pct",
};

#ifdef AO_HAVE_RANGE_PROFILER
#define AO_HW_MAX_PASSES 16

static struct {
    CUptiResult (*init)(CUpti_Profiler_Initialize_Params *);
    CUptiResult (*chip)(CUpti_Device_GetChipName_Params *);
    CUptiResult (*avail)(CUpti_Profiler_GetCounterAvailability_Params *);
    CUptiResult (*host_init)(CUpti_Profiler_Host_Initialize_Params *);
    CUptiResult (*add)(CUpti_Profiler_Host_ConfigAddMetrics_Params *);
    CUptiResult (*config_size)(CUpti_Profiler_Host_GetConfigImageSize_Params *);
    CUptiResult (*config)(CUpti_Profiler_Host_GetConfigImage_Params *);
    CUptiResult (*passes)(CUpti_Profiler_Host_GetNumOfPasses_Params *);
    CUptiResult (*evaluate)(CUpti_Profiler_Host_EvaluateToGpuValues_Params *);
    CUptiResult (*enable)(CUpti_RangeProfiler_Enable_Params *);
    CUptiResult (*data_size)(CUpti_RangeProfiler_GetCounterDataSize_Params *);
    CUptiResult (*data_init)(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *);
    CUptiResult (*set_config)(CUpti_RangeProfiler_SetConfig_Params *);
    CUptiResult (*start)(CUpti_RangeProfiler_Start_Params *);
    CUptiResult (*stop)(CUpti_RangeProfiler_Stop_Params *);
    CUptiResult (*push)(CUpti_RangeProfiler_PushRange_Params *);
    CUptiResult (*pop)(CUpti_RangeProfiler_PopRange_Params *);
    CUptiResult (*decode)(CUpti_RangeProfiler_DecodeData_Params *);
    CUptiResult (*info)(CUpti_RangeProfiler_GetCounterDataInfo_Params *);
    CUpti_Profiler_Host_Object *host;
    CUpti_RangeProfiler_Object *obj;
    uint8_t *config_image, *data;
    size_t config_bytes, data_bytes;
} ao_hw;

/* every entry point, from the CUPTI library the activity records use */
static int ao_hw_symbols(void)
{
    void *h = dlopen(AO_CUPTI_LIB, RTLD_NOW | RTLD_LOCAL);
    struct {
        void **to;
        const char *name;
    } want[] = {
        {(void **)&ao_hw.init, "cuptiProfilerInitialize"},
        {(void **)&ao_hw.chip, "cuptiDeviceGetChipName"},
        {(void **)&ao_hw.avail, "cuptiProfilerGetCounterAvailability"},
        {(void **)&ao_hw.host_init, "cuptiProfilerHostInitialize"},
        {(void **)&ao_hw.add, "cuptiProfilerHostConfigAddMetrics"},
        {(void **)&ao_hw.config_size, "cuptiProfilerHostGetConfigImageSize"},
        {(void **)&ao_hw.config, "cuptiProfilerHostGetConfigImage"},
        {(void **)&ao_hw.passes, "cuptiProfilerHostGetNumOfPasses"},
        {(void **)&ao_hw.evaluate, "cuptiProfilerHostEvaluateToGpuValues"},
        {(void **)&ao_hw.enable, "cuptiRangeProfilerEnable"},
        {(void **)&ao_hw.data_size, "cuptiRangeProfilerGetCounterDataSize"},
        {(void **)&ao_hw.data_init, "cuptiRangeProfilerCounterDataImageInitialize"},
        {(void **)&ao_hw.set_config, "cuptiRangeProfilerSetConfig"},
        {(void **)&ao_hw.start, "cuptiRangeProfilerStart"},
        {(void **)&ao_hw.stop, "cuptiRangeProfilerStop"},
        {(void **)&ao_hw.push, "cuptiRangeProfilerPushRange"},
        {(void **)&ao_hw.pop, "cuptiRangeProfilerPopRange"},
        {(void **)&ao_hw.decode, "cuptiRangeProfilerDecodeData"},
        {(void **)&ao_hw.info, "cuptiRangeProfilerGetCounterDataInfo"},
    };

    if (!h)
        return -1;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!(*want[i].to = dlsym(h, want[i].name)))
            return -1;
    return 0;
}

/* The driver's current context (the runtime made it): cuCtxGetCurrent of
 * the libcuda the runtime loaded. */
static CUcontext ao_hw_context(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CUresult (*current)(CUcontext *) = h ? (CUresult(*)(CUcontext *))dlsym(h, "cuCtxGetCurrent") : NULL;
    CUcontext ctx = NULL;

    if (current && current(&ctx) != CUDA_SUCCESS)
        ctx = NULL;
    return ctx;
}

/* Set the range profiler up on GPU 0's context: the configuration of
 * ao_hw_names and a counter data image of one range.  hw_status's value. */
static int ao_hw_open(uint32_t *passes_out)
{
    CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    CUpti_Profiler_GetCounterAvailability_Params av = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_GetConfigImageSize_Params cs = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_GetConfigImage_Params ci = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_GetNumOfPasses_Params np = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_GetCounterDataSize_Params ds = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = {
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_SetConfig_Params sc = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    uint8_t *avail = NULL;

    if (ao_hw_symbols() < 0 || ao_hw.init(&init) != CUPTI_SUCCESS)
        return AO_HW_NO_LIBRARY;
    chip.deviceIndex = 0;
    if (ao_hw.chip(&chip) != CUPTI_SUCCESS || !chip.pChipName)
        return AO_HW_NO_CHIP;
    av.ctx = ao_hw_context();
    if (ao_hw.avail(&av) != CUPTI_SUCCESS || !(avail = (uint8_t *)malloc(av.counterAvailabilityImageSize)))
        return AO_HW_NO_HOST;
    av.pCounterAvailabilityImage = avail;
    if (ao_hw.avail(&av) != CUPTI_SUCCESS)
        return AO_HW_NO_HOST;
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = chip.pChipName;
    hi.pCounterAvailabilityImage = avail;
    if (ao_hw.host_init(&hi) != CUPTI_SUCCESS || !hi.pHostObject)
        return AO_HW_NO_HOST;
    ao_hw.host = hi.pHostObject;
    add.pHostObject = ao_hw.host;
    add.ppMetricNames = ao_hw_names;
    add.numMetrics = AO_RUN_HW_METRICS;
    cs.pHostObject = ao_hw.host;
    if (ao_hw.add(&add) != CUPTI_SUCCESS || ao_hw.config_size(&cs) != CUPTI_SUCCESS ||
        !(ao_hw.config_image = (uint8_t *)malloc(cs.configImageSize)))
        return AO_HW_NO_CONFIG;
    ao_hw.config_bytes = ci.configImageSize = cs.configImageSize;
    ci.pHostObject = ao_hw.host;
    ci.pConfigImage = ao_hw.config_image;
    np.configImageSize = ao_hw.config_bytes;
    np.pConfigImage = ao_hw.config_image;
    if (ao_hw.config(&ci) != CUPTI_SUCCESS || ao_hw.passes(&np) != CUPTI_SUCCESS || np.numOfPasses < 1 ||
        np.numOfPasses > AO_HW_MAX_PASSES)
        return AO_HW_NO_CONFIG;
    *passes_out = (uint32_t)np.numOfPasses;
    en.ctx = av.ctx;
    if (ao_hw.enable(&en) != CUPTI_SUCCESS || !en.pRangeProfilerObject)
        return AO_HW_NO_ENABLE;
    ao_hw.obj = en.pRangeProfilerObject;
    ds.pRangeProfilerObject = ao_hw.obj;
    ds.pMetricNames = ao_hw_names;
    ds.numMetrics = AO_RUN_HW_METRICS;
    ds.maxNumOfRanges = 1;
    ds.maxNumRangeTreeNodes = 1;
    if (ao_hw.data_size(&ds) != CUPTI_SUCCESS || !(ao_hw.data = (uint8_t *)malloc(ds.counterDataSize)))
        return AO_HW_NO_IMAGE;
    ao_hw.data_bytes = di.counterDataSize = ds.counterDataSize;
    di.pRangeProfilerObject = ao_hw.obj;
    di.pCounterData = ao_hw.data;
    if (ao_hw.data_init(&di) != CUPTI_SUCCESS)
        return AO_HW_NO_IMAGE;
    sc.pRangeProfilerObject = ao_hw.obj;
    sc.configSize = ao_hw.config_bytes;
    sc.pConfig = ao_hw.config_image;
    sc.counterDataImageSize = ao_hw.data_bytes;
    sc.pCounterDataImage = ao_hw.data;
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = 1;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    if (ao_hw.set_config(&sc) != CUPTI_SUCCESS)
        return AO_HW_NO_IMAGE;
    return AO_HW_READY;
}

/* The call in one range, replayed until every pass is in (call() makes
 * one call and waits for the device), then decoded and evaluated into
 * hw[].  hw_status's value. */
static int ao_hw_read(void (*call)(void *), void *arg, volatile double *hw)
{
    CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_PushRange_Params push = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_PopRange_Params pop = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_DecodeData_Params dec = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    double v[AO_RUN_HW_METRICS];
    int pass = 0;

    start.pRangeProfilerObject = stop.pRangeProfilerObject = ao_hw.obj;
    push.pRangeProfilerObject = pop.pRangeProfilerObject = dec.pRangeProfilerObject = ao_hw.obj;
    push.pRangeName = "call";
    do {
        if (ao_hw.start(&start) != CUPTI_SUCCESS || ao_hw.push(&push) != CUPTI_SUCCESS)
            return AO_HW_RUN;
        call(arg);
        if (ao_hw.pop(&pop) != CUPTI_SUCCESS || ao_hw.stop(&stop) != CUPTI_SUCCESS)
            return AO_HW_RUN;
    } while (!stop.isAllPassSubmitted && ++pass < AO_HW_MAX_PASSES);
    if (!stop.isAllPassSubmitted || ao_hw.decode(&dec) != CUPTI_SUCCESS)
        return AO_HW_DECODE;
    info.pCounterDataImage = ao_hw.data;
    info.counterDataImageSize = ao_hw.data_bytes;
    if (ao_hw.info(&info) != CUPTI_SUCCESS || info.numTotalRanges < 1)
        return AO_HW_DECODE;
    ev.pHostObject = ao_hw.host;
    ev.pCounterDataImage = ao_hw.data;
    ev.counterDataImageSize = ao_hw.data_bytes;
    ev.rangeIndex = 0;
    ev.ppMetricNames = ao_hw_names;
    ev.numMetrics = AO_RUN_HW_METRICS;
    ev.pMetricValues = v;
    if (ao_hw.evaluate(&ev) != CUPTI_SUCCESS)
        return AO_HW_EVALUATE;
    for (int i = 0; i < AO_RUN_HW_METRICS; i++)
        hw[i] = v[i];
    return AO_HW_READ;
}
#else
static int ao_hw_open(uint32_t *passes_out)
{
    *passes_out = 0;
    return AO_HW_NO_LIBRARY;
}

static int ao_hw_read(void (*call)(void *), void *arg, volatile double *hw)
{
    (void)call, (void)arg, (void)hw;
    return AO_HW_NO_LIBRARY;
}
#endif

#endif
