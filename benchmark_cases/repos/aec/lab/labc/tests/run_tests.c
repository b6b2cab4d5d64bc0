/* The project's own tiny harness: one line per test, a count at the end. */
#include <stdio.h>
#include <stdlib.h>
#include "../src/ring.h"

static int run = 0, failed = 0;
#define CHECK(name, cond) do { run++; if (cond) printf("[ OK ] %s\n", name); \
    else { failed++; printf("[FAIL] %s\n", name); } } while (0)

int main(void) {
    ring r; int v = 0;
    CHECK("init", ring_init(&r, 2) == 0);
    CHECK("pop_empty", ring_pop(&r, &v) == -1);
    CHECK("push_two", ring_push(&r, 1) == 0 && ring_push(&r, 2) == 0);
    CHECK("push_full", ring_push(&r, 3) == -1);
    CHECK("fifo", ring_pop(&r, &v) == 0 && v == 1);
    FILE *f = fopen("tests/data/expected.txt", "r");
    CHECK("data_file", f != NULL);
    if (f) fclose(f);
    ring_free(&r);
    printf("%d checks, %d passed, %d failed\n", run, run - failed, failed);
    return failed ? 1 : 0;
}
