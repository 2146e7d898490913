/* test_target.c - the registry of targets */
#include <string.h>

#include "check.h"
#include "target.h"

int main(void)
{
    char err[300], names[100];
    const struct ao_target *t = ao_target_find("cpu");

    CHECK(t && t == ao_target_default() && strcmp(t->ext, "c") == 0 && t->compiler &&
              strstr(t->compiler, "gcc"),
          "cpu is built in, the default, with C files compiled by gcc");
    CHECK(!ao_target_find("cuda") && !ao_target_find("") && !ao_target_find(NULL) &&
              !ao_target_find("CPU"),
          "names are exact; a target not built in is not found");
    ao_target_names(names, sizeof names);
    CHECK(strcmp(names, "cpu") == 0, "the built-in names (%s)", names);
    CHECK(!ao_target_get("cuda", err, sizeof err) &&
              strstr(err, "target 'cuda' is not built into this accelopt (built in: cpu)"),
          "an unknown target's error names the ones there are");
    {
        int has_c = 0;
        for (const char *const *l = t->fence_tags; *l; l++)
            has_c |= strcmp(*l, "c") == 0;
        CHECK(has_c, "a ```c block is a cpu kernel's");
    }
    return CHECK_DONE();
}
