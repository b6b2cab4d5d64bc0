#ifndef RING_H
#define RING_H
#include <stddef.h>
typedef struct { int *data; size_t cap, head, len; } ring;
int ring_init(ring *r, size_t cap);
void ring_free(ring *r);
int ring_push(ring *r, int v);
int ring_pop(ring *r, int *out);
#endif
