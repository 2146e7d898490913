/* test_io.c - pipe mode: messages flow, bad ones become dead letters, the loop goes on */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "wire/io.h"
#include "wire/msg.h"

/* echo kernel ids back as their ids; refuse messages without an id */
static int echo(void *ctx, struct ao_io *io, const cJSON *msg, char *reason, size_t len)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    (*(int *)ctx)++;
    if (!cJSON_IsString(id)) {
        snprintf(reason, len, "no id");
        return -1;
    }
    return ao_io_emit_json(io, "out", "k", msg);
}

int main(void)
{
    const char *input = "{\"id\":\"a\"}\n\nnot json\n{\"id\":\"b\"}\n{\"x\":1}\n{\"id\":\"c\"}";
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    char *outbuf = NULL, *dlqbuf = NULL;
    size_t outlen = 0, dlqlen = 0;
    FILE *out = open_memstream(&outbuf, &outlen), *dlq = open_memstream(&dlqbuf, &dlqlen);
    struct ao_io *io = ao_io_stdio_new("test", in, out, dlq);
    int calls = 0, rc;

    rc = ao_io_run(io, echo, &calls);
    fflush(out);
    fflush(dlq);
    CHECK(rc == 0, "the loop ends cleanly at end of input");
    CHECK(calls == 4, "process ran for each JSON line, blank lines skipped (%d)", calls);
    CHECK(io->in == 5 && io->out == 3 && io->dead == 2, "counts: in %lld out %lld dead %lld",
          io->in, io->out, io->dead);
    CHECK(outbuf && !strcmp(outbuf, "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n"),
          "outputs in order, one per line");
    {
        int n = 0, ok = 1;
        char err[AO_ERRLEN];
        for (char *save = NULL, *l = strtok_r(dlqbuf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            cJSON *j = cJSON_Parse(l);
            struct ao_dlq_msg d;
            ok &= j && ao_msg_decode(&ao_msg_dlq, j, &d, err, sizeof err) == 0;
            if (ok) {
                ok &= n == 0 ? strstr(d.reason, "not valid JSON") && !strcmp(d.payload, "not json")
                             : !strcmp(d.reason, "no id") && !strcmp(d.payload, "{\"x\":1}");
                ao_msg_release(&ao_msg_dlq, &d);
            }
            cJSON_Delete(j);
            n++;
        }
        CHECK(ok && n == 2, "dead letters are valid dlq messages with reason and payload");
    }
    ao_io_free(io);
    fclose(in);
    fclose(out);
    fclose(dlq);
    free(outbuf);
    free(dlqbuf);
    return CHECK_DONE();
}
