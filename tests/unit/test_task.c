/* test_task.c - task.json loading, the signature convention, work formulas */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "task.h"
#include "util.h"

static double eval(const char *e)
{
    char names[3][16] = {"M", "K", "N"}, err[AO_ERRLEN];
    long long v[3] = {2, 3, 5};
    double out = NAN;
    if (ao_formula_eval(e, names, v, 3, &out, err, sizeof err) < 0)
        return NAN;
    return out;
}

int main(void)
{
    char path[600], err[AO_ERRLEN];
    struct ao_task t;
    long long d[AO_MAX_DIMS];
    double mm, vec, bytes;

    CHECK(eval("2*M*N*K") == 60, "products");
    CHECK(eval("4*(M*K + K*N + M*N)") == 4 * (6 + 15 + 10), "parentheses and sums");
    CHECK(eval("M - K - N") == -6, "subtraction is left-associative");
    CHECK(eval("N / M / 5") == 0.5, "division is left-associative");
    CHECK(eval("-M + 0.5") == -1.5, "unary minus and decimals");
    CHECK(isnan(eval("2*Q")), "unknown names are refused");
    CHECK(isnan(eval("2*(M")), "unbalanced parentheses are refused");
    CHECK(isnan(eval("M M")), "trailing tokens are refused");

    snprintf(path, sizeof path, "%s/nkibench/matmul", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0, "matmul loads: %s", err);
    CHECK(!strcmp(t.signature, "void kernel(const float *lhs, const float *rhs, float *out, int M, "
                  "int K, int N)"), "matmul has the exact signature");
    CHECK(ao_task_size(&t, "tiny", d, err, sizeof err) == 0 && d[0] == 96 && d[1] == 128 &&
          d[2] == 160, "tiny dims in order of first appearance");
    CHECK(ao_task_work(&t, d, &mm, &vec, &bytes, err, sizeof err) == 0 &&
          mm == 2.0 * 96 * 128 * 160 && vec == 0 && bytes == 4.0 * (96 * 128 + 128 * 160 + 96 * 160),
          "matmul work at tiny");
    CHECK(ao_task_size(&t, "paper", d, err, sizeof err) == 0 && d[0] == 4096 && d[1] == 5120 &&
          d[2] == 12288, "paper shapes recorded as given");
    CHECK(ao_task_size(&t, "huge", d, err, sizeof err) < 0 && strstr(err, "huge"),
          "unknown size class is refused");
    CHECK(ao_task_elems(&t, 2, (long long[]){96, 128, 160}) == 96 * 160, "output elements");

    snprintf(path, sizeof path, "%s/nkibench/silu", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0 &&
          !strcmp(t.signature, "void kernel(const float *x, float *out, int M, int N)"),
          "silu loads with its signature");
    CHECK(ao_task_size(&t, "cpu", d, err, sizeof err) == 0 &&
          ao_task_work(&t, d, &mm, &vec, &bytes, err, sizeof err) == 0 &&
          vec == 3.0 * d[0] * d[1] && bytes == 8.0 * d[0] * d[1] && mm == 0, "silu work");
    snprintf(path, sizeof path, "%s/nkibench/rmsnorm_matmul", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0 && t.tolerance == 2e-5 &&
          t.ninputs == 2 && t.noutputs == 1, "rmsnorm_matmul loads");
    CHECK(ao_task_size(&t, "tiny", d, err, sizeof err) == 0 &&
          ao_task_work(&t, d, &mm, &vec, &bytes, err, sizeof err) == 0 &&
          mm == 2.0 * d[0] * d[1] * d[2] && vec == 4.0 * d[0] * d[1], "rmsnorm_matmul work");

    /* a task whose declared signature breaks the convention */
    {
        char dir[] = "/tmp/accelopt-task-XXXXXX", file[600];
        const char *bad = "{\"name\":\"bad\",\"inputs\":[{\"name\":\"a\",\"shape\":[\"M\"]}],"
                          "\"outputs\":[{\"name\":\"b\",\"shape\":[\"M\"]}],\"sizes\":{\"tiny\":{\"M\":4}},"
                          "\"work\":{\"mm_flops\":\"0\",\"vec_flops\":\"M\",\"bytes\":\"8*M\"},"
                          "\"tolerance\":1e-5,\"signature\":\"void kernel(float *a, float *b, int M)\"}";
        CHECK(mkdtemp(dir) != NULL, "temp dir");
        snprintf(file, sizeof file, "%s/task.json", dir);
        ao_write_file(file, bad, strlen(bad), err, sizeof err);
        CHECK(ao_task_load(dir, &t, err, sizeof err) < 0 && strstr(err, "const float *a"),
              "a wrong signature is refused: %s", err);
        ao_rmtree(dir);
    }
    return CHECK_DONE();
}
