/* test_elf.c - the object check that runs before a kernel is linked */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "measure/elfcheck.h"

static int check_src(const char *src, char *reason, size_t len)
{
    char dir[] = "/tmp/accelopt-elf-XXXXXX", c[600], o[600], cmd[1400], err[AO_ERRLEN];
    int rc;

    if (!mkdtemp(dir))
        return -2;
    snprintf(c, sizeof c, "%s/k.c", dir);
    snprintf(o, sizeof o, "%s/k.o", dir);
    ao_write_file(c, src, strlen(src), err, sizeof err);
    snprintf(cmd, sizeof cmd, "gcc -O2 -c %s -o %s", c, o);
    rc = system(cmd) == 0 ? ao_elf_check(o, "kernel", reason, len) : -2;
    ao_rmtree(dir);
    return rc;
}

int main(void)
{
    char r[512];
    CHECK(check_src("static float sq(float x){return x*x;}\n"
                    "void kernel(float *x, int n){for(int i=0;i<n;i++)x[i]=sq(x[i]);}\n", r,
                    sizeof r) == 0, "a kernel with static helpers passes");
    CHECK(check_src("void helper(void){}\nvoid kernel(void){helper();}\n", r, sizeof r) == 1 &&
          strstr(r, "helper"), "a second external function is refused: %s", r);
    CHECK(check_src("int table[4] = {1};\nvoid kernel(void){table[0]++;}\n", r, sizeof r) == 1 &&
          strstr(r, "table"), "an external variable is refused: %s", r);
    CHECK(check_src("static int unused;\n", r, sizeof r) == 1 && strstr(r, "does not define"),
          "no kernel is refused: %s", r);
    CHECK(check_src("int kernel = 3;\n", r, sizeof r) == 1 && strstr(r, "function"),
          "a kernel that is data is refused: %s", r);
    CHECK(check_src("static volatile int x;\n__attribute__((destructor)) static void d(void){x=1;}\n"
                    "void kernel(void){x=2;}\n", r, sizeof r) == 1 && strstr(r, "fini_array"),
          "a destructor is refused: %s", r);
    CHECK(check_src("void ao_call(void);\nvoid kernel(void){ao_call();}\n", r, sizeof r) == 1 &&
          strstr(r, "harness"), "calling into the harness is refused: %s", r);
    CHECK(ao_elf_check("/etc/hostname", "kernel", r, sizeof r) == -1, "a non-ELF file is an error");
    return CHECK_DONE();
}
