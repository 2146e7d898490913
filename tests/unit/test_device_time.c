/* test_device_time.c - a device's word against the host's clock
 * (prof_device_unbelievable, issue 46 part 6): what is refused, what an
 * honest tiny kernel whose host time is mostly launch keeps, and that
 * medians decide */
#include <string.h>

#include "check.h"
#include "profiler/profiler_int.h"

static int judge(const long long *host, const long long *dev, int n, long long launch, char *why)
{
    why[0] = '\0';
    return prof_device_unbelievable(host, dev, n, launch, why, 600);
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
    return CHECK_DONE();
}
