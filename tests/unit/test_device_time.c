/* test_device_time.c - a device's word against the host's clock
 * (prof_device_unbelievable, issue 46 part 6): what is refused, what an
 * honest tiny kernel whose host time is mostly launch keeps, and that
 * medians decide; and a runner's own per-call device times (issue 57) */
#include <string.h>

#include "check.h"
#include "profiler/profiler_int.h"

static int judge(const long long *host, const long long *dev, int n, long long launch, char *why)
{
    why[0] = '\0';
    return prof_device_unbelievable(host, dev, n, launch, why, 600);
}

/* prof_runner_clock (issue 57): a runner's own device times, as the cuda
 * runner's gated events give them, held against the host's clock */
static void runner_clock(void)
{
    char why[600];
    long long lat[4];
    int raised;
    unsigned none[4] = {0, 0, 0, 0}, one_late[4] = {0, 3, 0, 0};
    /* silu's example at paper: 63 us on the device, ~55 us of host around
     * it, as the reference showed (launch 52 us): the device's time stands */
    long long raw[4] = {117000, 121000, 116500, 130000}, dev[4] = {63000, 63400, 62800, 63100};
    /* the same calls, the runner claiming 20 us: past the allowance (52 +
     * 30 + 10 + 20/16 = 93.25 us), each call's figure is our clock's less it */
    long long lie[4] = {20000, 20000, 20000, 20000}, lie25[4] = {25000, 25000, 25000, 25000};
    /* a claim of 40 us: within the allowance, it stands (what the gate and
     * the slack cost: an under-report of up to 40 us here) */
    long long small[4] = {40000, 40000, 40000, 40000};
    /* a device time longer than the whole call on our clock */
    long long over[4] = {63000, 175000, 62800, 63100};
    /* honest, as an H200 saw them (issue 57): a 28 us kernel whose host
     * code took 250 us more; a 1.7 ms kernel whose runner woke 400 us late
     * under load.  Our clock's figure, not a refusal */
    long long h_host[4] = {330000, 325000, 335000, 330000}, d_host[4] = {28000, 28300, 28100, 27900};
    long long h_late[4] = {2190000, 2200000, 2180000, 2195000},
              d_late[4] = {1700000, 1710000, 1705000, 1702000};
    /* a claim of 1 us for calls the host timed at 2.2 ms: far below */
    long long tiny[4] = {1000, 1000, 1000, 1000};
    /* 2 us on the device behind a gate whose empty call takes 3.1 us */
    long long r_short[4] = {9000, 9000, 9000, 9000}, d_short[4] = {2000, 2000, 2000, 2000};

    why[0] = '\0';
    CHECK(prof_runner_clock(raw, dev, none, 4, 52000, 0, lat, &raised, why, sizeof why) == 0 &&
              raised == 0 && lat[0] == 63000 && lat[3] == 63100,
          "honest device times stand (raised %d, lat %lld)", raised, lat[0]);
    CHECK(prof_runner_clock(raw, lie, none, 4, 52000, 0, lat, &raised, why, sizeof why) == 0 &&
              raised == 4 && lat[0] == 117000 - 93250 && lat[3] == 130000 - 93250,
          "an under-report past the allowance: our clock less the allowance (%lld)", lat[0]);
    CHECK(prof_runner_clock(raw, small, none, 4, 52000, 0, lat, &raised, why, sizeof why) == 0 &&
              raised == 0 && lat[0] == 40000,
          "an under-report within the allowance stands (the bound, not a detector)");
    CHECK(prof_runner_clock(raw, dev, one_late, 4, 52000, 0, lat, &raised, why, sizeof why) == 0 &&
              raised == 1 && lat[1] == 121000 - 52000 && lat[0] == 63000,
          "a call whose DRAIN found late records is allowed the launch overhead alone (%lld)", lat[1]);
    CHECK(prof_runner_clock(raw, over, none, 4, 52000, 0, lat, &raised, why, sizeof why) == 1 &&
              strstr(why, "longer than the host's clock"),
          "a device time longer than the call is refused: %s", why);
    CHECK(prof_runner_clock(h_host, d_host, none, 4, 40000, 0, lat, &raised, why, sizeof why) == 0 &&
              raised == 4 && lat[0] > 200000,
          "honest host work of 250 us a call: our clock's figure, not a refusal (%lld)", lat[0]);
    CHECK(prof_runner_clock(h_late, d_late, none, 4, 49000, 0, lat, &raised, why, sizeof why) == 0 &&
              lat[0] >= 1700000 && lat[0] < 2190000,
          "an honest 1.7 ms kernel on a busy host: kept, its figure at most our clock's (%lld)", lat[0]);
    CHECK(prof_runner_clock(h_late, tiny, none, 4, 49000, 0, lat, &raised, why, sizeof why) == 1 &&
              strstr(why, "far below"),
          "1 us of device time for calls of 2.2 ms is refused: %s", why);
    CHECK(prof_runner_clock(raw, dev, none, 4, 0, 0, lat, &raised, why, sizeof why) == -1,
          "no launch overhead measured on the reference: the host's clock stands");
    /* the gate's own cost (issue 71): an empty call's 3.1 us of device
     * time in the same process, taken off each latency, not off the
     * device times held against our clock */
    CHECK(prof_runner_clock(raw, dev, none, 4, 52000, 3100, lat, &raised, why, sizeof why) == 0 &&
              raised == 0 && lat[0] == 63000 - 3100 && lat[3] == 63100 - 3100,
          "the empty call's device time comes off each call's (%lld)", lat[0]);
    CHECK(prof_runner_clock(raw, lie, none, 4, 52000, 3100, lat, &raised, why, sizeof why) == 0 &&
              raised == 4 && lat[0] == 117000 - 93250,
          "an under-report past the allowance still gets our clock less the allowance (%lld)", lat[0]);
    CHECK(prof_runner_clock(r_short, d_short, none, 4, 1000, 3100, lat, &raised, why, sizeof why) == 0 &&
              lat[0] == 2000,
          "a call shorter than the empty one keeps its own figure, as under a wake-up (%lld)", lat[0]);
    /* our clock's floor binds the latency, not the device's raw time: 25 us
     * claimed, 117 us on our clock, an allowance of 93.56 us (52 + 30 + 10
     * + 25/16): at least 23.44 us, over the claim less the empty call's
     * 3.1 us (21.9) though under the claim itself */
    CHECK(prof_runner_clock(raw, lie25, none, 4, 52000, 3100, lat, &raised, why, sizeof why) == 0 &&
              raised == 4 && lat[0] == 117000 - 93562,
          "the floor holds against the latency after the empty call comes off (%lld)", lat[0]);
    dev[2] = 0;
    CHECK(prof_runner_clock(raw, dev, none, 4, 52000, 0, lat, &raised, why, sizeof why) == -1,
          "a call without a device time: the host's clock stands");
    CHECK(prof_runner_clock(raw, dev, none, 0, 52000, 0, lat, &raised, why, sizeof why) == -1,
          "no calls, no device times");
}

int main(void)
{
    char why[600];
    /* issue 46's trace: 6 us on the device for an execution the host timed at 88 ms */
    long long h_lie[4] = {88000000, 87500000, 89000000, 88200000}, d_lie[4] = {6000, 6000, 6100, 5900};
    /* an honest tiny kernel: 10 us on the device, 100 us host, 90 us of launch */
    long long h_tiny[3] = {100000, 104000, 98000}, d_tiny[3] = {10000, 10500, 9800};
    /* an honest long kernel: the device's time is most of the host's */
    long long h_long[3] = {5100000, 5200000, 5150000}, d_long[3] = {5000000, 5090000, 5010000};
    /* one view wildly off, the median not: medians decide */
    long long h_one[3] = {1000000, 1000000, 1000000}, d_one[3] = {1000, 950000, 960000};

    CHECK(judge(h_lie, d_lie, 4, 100000, why) == 1 && strstr(why, "far below the host's clock") &&
              strstr(why, "launch overheads"),
          "a 6 us trace for an 88 ms execution is refused: %s", why);
    CHECK(judge(h_lie, d_lie, 4, 0, why) == 0, "with no launch overhead measured, not judged");
    CHECK(judge(h_tiny, d_tiny, 3, 90000, why) == 0,
          "an honest tiny kernel whose host time is mostly launch is kept");
    CHECK(judge(h_tiny, d_tiny, 3, 5000, why) == 1,
          "... but refused where launch was measured at 5 us (a gap of 90 us is 18 launches)");
    CHECK(judge(h_long, d_long, 3, 100000, why) == 0, "an honest long kernel is kept");
    CHECK(judge(h_one, d_one, 3, 1000, why) == 0, "one view off does not refuse: the medians decide");
    CHECK(judge(h_lie, d_lie, 0, 100000, why) == 0, "no views, no judgement");
    runner_clock();
    return CHECK_DONE();
}
