/* test_task.c - task.json loading, the signature convention, work formulas */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/task.h"
#include "core/util.h"

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
    CHECK(t.dim_independent[0] && !t.dim_independent[1] && t.dim_independent[2],
          "matmul's M and N are independent, K is not (issue 66)");

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

    /* Work per task at the paper shapes, written out by hand from the
     * NKIBench table (not from the task.json formulas): mm FLOPs 2MNK per
     * product, vec FLOPs per NKIBench's per-task counts, bytes = inputs
     * read once + outputs written once. */
    {
        static const struct { const char *task; double mm, vec, bytes; } want[] = {
            {"adamw", 0, 7.0 * 10944 * 2048, 4.0 * 5 * 10944 * 2048},
            {"add_rmsnorm_matmul", 2.0 * 4096 * 2048 * 1024, 6.0 * 4096 * 1024,
             4.0 * (4096 * 1024 + 1024 * 2048 + 4096 * 1024 + 1024 + 4096 * 2048)},
            {"matmul_add_rmsnorm", 2.0 * 4096 * 2048 * 2048, 6.0 * 4096 * 2048,
             4.0 * (4096 * 2048 + 2048 * 2048 + 4096 * 2048 + 2048 + 4096 * 2048)},
            {"rmsnorm_matmul", 2.0 * 4096 * 2048 * 1024, 4.0 * 4096 * 1024,
             4.0 * (4096 * 1024 + 1024 * 2048 + 4096 * 2048)},
            {"matmul", 2.0 * 4096 * 12288 * 5120, 0,
             4.0 * (4096 * 5120 + 5120.0 * 12288 + 4096.0 * 12288)},
            {"transpose_matmul", 2.0 * 4096 * 10944 * 2048, 0,
             4.0 * (2048 * 4096 + 2048 * 10944 + 4096.0 * 10944)},
            {"bmm", 2.0 * 16 * 4096 * 4096 * 64, 0,
             4.0 * (16 * 4096 * 64 + 16 * 64 * 4096 + 16.0 * 4096 * 4096)},
            {"bmm_softmax", 2.0 * 16 * 4096 * 4096 * 64, 5.0 * 16 * 4096 * 4096,
             4.0 * (16 * 4096 * 64 + 16 * 64 * 4096 + 16.0 * 4096 * 4096)},
            {"lora", 2.0 * 4096 * 12288 * 5120 + 2.0 * 4096 * 5120 * 128 + 2.0 * 4096 * 128 * 12288,
             4096.0 * 12288,
             4.0 * (4096 * 5120 + 5120.0 * 12288 + 5120 * 128 + 128 * 12288 + 4096.0 * 12288)},
            {"swiglu", 3 * 2.0 * 4096 * 1024 * 3072, 5.0 * 4096 * 3072,
             4.0 * (4096 * 1024 + 3 * 1024 * 3072 + 4096 * 1024)},
            {"silu", 0, 3.0 * 4096 * 7168, 4.0 * 2 * 4096 * 7168},
            /* two products (q k^T and p v) of 2*N*N*D per query head */
            {"gqa_full", 2 * 2.0 * 16 * 4096 * 4096 * 128, 5.0 * 16 * 4096 * 4096,
             4.0 * (4096 * 16 * 128 + 2 * 4096 * 8 * 128 + 16 * 4096 * 128)},
            {"rope_single_freq_apply", 0, 3.0 * 128 * 262144,
             4.0 * (128 * 262144 + 2 * 64 * 262144 + 128 * 262144)},
            {"mamba", 0, 8.0 * 7168 * 256 * 16,
             4.0 * (2 * 256 * 7168 + 256 * 16 + 2 * 16 * 7168 + 256 * 7168)},
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            snprintf(path, sizeof path, "%s/nkibench/%s", ao_home(), want[i].task);
            CHECK(ao_task_load(path, &t, err, sizeof err) == 0, "%s loads: %s", want[i].task, err);
            CHECK(ao_task_size(&t, "paper", d, err, sizeof err) == 0 &&
                  ao_task_work(&t, d, &mm, &vec, &bytes, err, sizeof err) == 0 &&
                  mm == want[i].mm && vec == want[i].vec && bytes == want[i].bytes,
                  "%s: work at the paper shape (mm %g vec %g bytes %g)", want[i].task, mm, vec,
                  bytes);
            CHECK(ao_task_size(&t, "tiny", d, err, sizeof err) == 0 &&
                  ao_task_size(&t, "cpu", d, err, sizeof err) == 0, "%s: tiny and cpu sizes",
                  want[i].task);
        }
    }
    snprintf(path, sizeof path, "%s/nkibench/gqa_full", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0 && t.has_stress && t.nconstraints == 1 &&
          t.t[0].stress.b == 50 && t.t[0].dist.b == 1 && t.t[1].stress.b == 1,
          "gqa_full: q has a stress distribution, the others keep theirs");
    CHECK(ao_task_check_dims(&t, (long long[]){1, 64, 4, 64, 2}, err, sizeof err) == 0,
          "gqa_full: H = 2*KH holds");
    CHECK(ao_task_check_dims(&t, (long long[]){1, 64, 4, 64, 4}, err, sizeof err) < 0 &&
          strstr(err, "2*KH"), "gqa_full: H != 2*KH is refused: %s", err);
    snprintf(path, sizeof path, "%s/nkibench/adamw", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0 && !t.has_stress &&
          t.t[3].dist.kind == AO_DIST_ABS_NORMAL && t.tolerance == 2e-6,
          "adamw: v is |N(0,1)|, and the tolerance sees the weight decay");
    snprintf(path, sizeof path, "%s/nkibench/mamba", ao_home());
    CHECK(ao_task_load(path, &t, err, sizeof err) == 0 && t.tolerance == 2e-4 &&
          t.t[0].dist.b == 0.05, "mamba: N(0, 0.05) inputs and a 2e-4 tolerance");

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
    /* a size class that breaks a constraint, and an output with a distribution */
    {
        static const char *const bad[] = {
            "{\"name\":\"c\",\"inputs\":[{\"name\":\"a\",\"shape\":[\"R\"]},"
            "{\"name\":\"h\",\"shape\":[\"H\"]}],\"outputs\":[{\"name\":\"b\","
            "\"shape\":[\"R\"]}],\"constraints\":[[\"R\",\"2*H\"]],\"sizes\":{\"tiny\":"
            "{\"R\":6,\"H\":2}},\"work\":{\"mm_flops\":\"0\",\"vec_flops\":\"R\","
            "\"bytes\":\"8*R\"},\"tolerance\":1e-5,\"signature\":\"void kernel(const "
            "float *a, const float *h, float *b, int R, int H)\"}",
            "{\"name\":\"d\",\"inputs\":[{\"name\":\"a\",\"shape\":[\"M\"]}],"
            "\"outputs\":[{\"name\":\"b\",\"shape\":[\"M\"],\"dist\":{\"kind\":"
            "\"normal\"}}],\"sizes\":{\"tiny\":{\"M\":4}},\"work\":{\"mm_flops\":\"0\","
            "\"vec_flops\":\"M\",\"bytes\":\"8*M\"},\"tolerance\":1e-5,\"signature\":"
            "\"void kernel(const float *a, float *b, int M)\"}",
            /* an independent size twice in one tensor, and one in no output (issue 66) */
            "{\"name\":\"e\",\"inputs\":[{\"name\":\"a\",\"shape\":[\"M\",\"M\"]}],"
            "\"outputs\":[{\"name\":\"b\",\"shape\":[\"M\"]}],\"dims\":{\"M\":{\"independent\":true}},"
            "\"sizes\":{\"tiny\":{\"M\":4}},\"work\":{\"mm_flops\":\"0\",\"vec_flops\":\"M\","
            "\"bytes\":\"8*M\"},\"tolerance\":1e-5,\"signature\":\"void kernel(const float *a, float *b, int M)\"}",
            "{\"name\":\"f\",\"inputs\":[{\"name\":\"a\",\"shape\":[\"M\",\"K\"]}],"
            "\"outputs\":[{\"name\":\"b\",\"shape\":[\"M\"]}],\"dims\":{\"K\":{\"independent\":true}},"
            "\"sizes\":{\"tiny\":{\"M\":4,\"K\":2}},\"work\":{\"mm_flops\":\"0\",\"vec_flops\":\"M\","
            "\"bytes\":\"8*M\"},\"tolerance\":1e-5,\"signature\":\"void kernel(const float *a, float *b, int M, int K)\"}",
        };
        static const char *const why[] = {"R = 2*H", "cannot have a distribution", "appears twice in 'a'",
                                          "no output has it"};
        for (int i = 0; i < 4; i++) {
            char dir[] = "/tmp/accelopt-task-XXXXXX", file[600];
            CHECK(mkdtemp(dir) != NULL, "temp dir");
            snprintf(file, sizeof file, "%s/task.json", dir);
            ao_write_file(file, bad[i], strlen(bad[i]), err, sizeof err);
            CHECK(ao_task_load(dir, &t, err, sizeof err) < 0 && strstr(err, why[i]),
                  "refused: %s", err);
            ao_rmtree(dir);
        }
    }
    return CHECK_DONE();
}
