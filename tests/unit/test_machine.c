/* test_machine.c - the core as the prompts tell it (ao_machine_core, issue
 * 47): the microarchitecture from the x86 family and model with what its
 * FMA units do, an unknown one said as unknown, the clock, the TLB, SMT and
 * how the tensors reach a kernel */
#include <stdlib.h>
#include <string.h>

#include "agents/machine.h"
#include "check.h"
#include "core/util.h"

static char *core(const char *info, const char *sib, const char *thp)
{
    struct ao_buf b = {0};
    ao_machine_core(info, sib, thp, &b);
    return b.data ? b.data : strdup("");
}

int main(void)
{
    char *zen4 = core("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
                      "model name\t: AMD EPYC 9654 96-Core Processor\ncpu MHz\t\t: 3700.000\n"
                      "TLB size\t: 3584 4K pages\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n",
                      "0,96\n", "always within_size advise [never] deny force\n");
    char *zen3 = core("vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\ncpu MHz\t\t: 2445.412\n",
                      "0\n", NULL);
    char *spr = core("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n", "0-1\n", NULL);
    char *odd = core("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 1\n", NULL, NULL);
    char *none = core(NULL, NULL, NULL);

    CHECK(strstr(zen4, "family 25 model 17 (0x19, 0x11): Zen 4:") && strstr(zen4, "512-bit FMA issues as two halves"),
          "Zen 4 from family 0x19 model 0x11, with how it runs AVX-512");
    CHECK(strstr(zen4, "Clock: 3700 MHz") && strstr(zen4, "TLB: 3584 4K pages"), "the clock and the TLB");
    CHECK(strstr(zen4, "SMT: core 0 has another logical CPU") && strstr(zen3, "SMT: no sibling"),
          "SMT from the sibling list: a sibling, and none");
    CHECK(strstr(zen4, "huge pages for shared memory: never") && strstr(zen4, "64-byte boundary") &&
              strstr(zen4, "read-for-ownership"),
          "how the tensors reach a kernel, and what the roofline counts");
    CHECK(strstr(zen3, "Zen 3: two 256-bit FMA pipes, no AVX-512") && strstr(zen3, "TLB: sizes not reported"),
          "Zen 3; a TLB /proc/cpuinfo does not report is said so");
    CHECK(strstr(spr, "Sapphire Rapids: two 512-bit FMA units"), "Sapphire Rapids from family 6 model 0x8f");
    CHECK(strstr(odd, "does not know") && !strstr(odd, "Zen") && !strstr(odd, "Clock:"),
          "a model the table lacks is said unknown, and no clock is made up");
    CHECK(!strstr(none, "Core:") && strstr(none, "Memory as the kernel sees it"),
          "no /proc/cpuinfo: no core line, the memory facts still");
    free(zen4);
    free(zen3);
    free(spr);
    free(odd);
    free(none);
    return CHECK_DONE();
}
