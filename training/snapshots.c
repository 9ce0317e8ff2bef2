/* snapshots.c — the last few epochs' parameters, for averaging (see
 * snapshots.h). */
#include "snapshots.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

void snapshots_init(Snapshots *s, int capacity, size_t size)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->size = size;
    if (capacity > 0) s->data = xcalloc((size_t)capacity * size, sizeof(float));
}

void snapshots_free(Snapshots *s)
{
    if (!s) return;
    free(s->data);
    memset(s, 0, sizeof *s);
}

void snapshots_add(Snapshots *s, const float *params)
{
    if (s->capacity == 0) return;
    memcpy(s->data + (size_t)s->next * s->size, params, s->size * sizeof(float));
    s->next = (s->next + 1) % s->capacity;
    if (s->count < s->capacity) s->count++;
}

void snapshots_average(const Snapshots *s, float *out)
{
    ASSERT(s->count >= 1);
    for (size_t i = 0; i < s->size; i++) {
        double sum = 0.0;
        for (int k = 0; k < s->count; k++) sum += s->data[(size_t)k * s->size + i];
        out[i] = (float)(sum / s->count);
    }
}
