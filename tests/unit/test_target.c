/* test_target.c - the registry of targets */
#include <string.h>

#include "check.h"
#include "targets/target.h"

int main(void)
{
    char err[300], names[100];
    const struct ao_target *t = ao_target_find("cpu");

    CHECK(t && t == ao_target_default() && strcmp(t->ext, "c") == 0 && t->compiler &&
              strstr(t->compiler, "gcc"),
          "cpu is built in, the default, with C files compiled by gcc");
    CHECK(!ao_target_find("nki") && !ao_target_find("") && !ao_target_find(NULL) &&
              !ao_target_find("CPU") && !ao_target_find("CUDA"),
          "names are exact; a target not built in is not found");
    ao_target_names(names, sizeof names);
    CHECK(strcmp(names, "cpu, cuda, trn") == 0, "the built-in names (%s)", names);
    CHECK(!ao_target_get("nki", err, sizeof err) &&
              strstr(err, "target 'nki' is not built into this accelopt (built in: cpu, cuda, trn)"),
          "an unknown target's error names the ones there are");
    {
        const struct ao_target *c = ao_target_find("cuda");
        CHECK(c && strcmp(c->ext, "cu") == 0 && strstr(c->compiler, "nvcc") &&
                  strcmp(c->kernel_file, "kernel.cu") == 0 &&
                  strcmp(c->reference_file, "reference.cu") == 0,
              "cuda is built in: .cu files, compiled by nvcc, checked against reference.cu");
    }
    {
        const struct ao_target *n = ao_target_find("trn");
        CHECK(n && strcmp(n->ext, "py") == 0 && strstr(n->compiler, "neuronx-cc") &&
                  strcmp(n->kernel_file, "kernel.py") == 0 && n->device_time && n->documented_peaks &&
                  n->failure_class && n->build_sandbox,
              "trn is built in: NKI .py files, compiled by neuronx-cc, timed by the device itself");
    }
    /* every operation the profiler calls is there, in every driver */
    {
        static const char *const all[] = {"cpu", "cuda", "trn"};
        for (int i = 0; i < 3; i++) {
            const struct ao_target *d = ao_target_find(all[i]);
            CHECK(d && d->convention && d->calibrate && d->machine && d->available &&
                      d->harness && d->harness_files && d->build_command && d->build_mem_bytes > 0 &&
                      d->check_build && d->runner_filter && d->basis &&
                      /* a device's tensors go there and back; the cpu's stay */
                      (!strcmp(d->name, "cpu") ? !d->before_call && !d->after_call
                                               : d->before_call && d->after_call) &&
                      (d->vendor_sgemm ? d->vendor_name != NULL : !strcmp(d->name, "trn")),
                  "the %s driver provides every operation", all[i]);
        }
    }
    {
        int has_c = 0;
        for (const char *const *l = t->fence_tags; *l; l++)
            has_c |= strcmp(*l, "c") == 0;
        CHECK(has_c, "a ```c block is a cpu kernel's");
    }
    {
        char list[128];
        ao_target_names(list, sizeof list);
        CHECK(!strcmp(AO_TARGET_DEFAULT, ao_target_default()->name) && !strcmp(list, AO_TARGET_NAMES),
              "the option tables' default and list of targets are the table's (%s; %s)", ao_target_default()->name,
              list);
    }
    return CHECK_DONE();
}
