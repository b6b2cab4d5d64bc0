#include <stdlib.h>
#include "ring.h"

int ring_init(ring *r, size_t cap) {
    r->data = malloc(cap * sizeof *r->data);
    r->cap = cap; r->head = 0; r->len = 0;
    return r->data ? 0 : -1;
}
void ring_free(ring *r) { free(r->data); r->data = NULL; }
int ring_push(ring *r, int v) {
    if (r->len == r->cap) return -1;
    r->data[(r->head + r->len) % r->cap] = v;
    r->len++;
    return 0;
}
int ring_pop(ring *r, int *out) {
    if (!r->len) return -1;
    *out = r->data[r->head];
    r->head = (r->head + 1) % r->cap;
    r->len--;
    return 0;
}
