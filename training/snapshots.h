/* snapshots.h — a ring of the parameters at the last few epoch ends, and
 * their mean.  train scores the mean as a model of its own
 * (train.average_last); checkpoint.h saves the ring, so --resume goes on
 * averaging the same epochs. */
#ifndef TRANSLATE_SNAPSHOTS_H
#define TRANSLATE_SNAPSHOTS_H

#include <stddef.h>

/* The parameters at the end of the last few epochs: their average is often
 * a better model than any one of them ("Attention Is All You Need" §6.1
 * averages the last 5 checkpoints). */
typedef struct {
    int capacity;       /* K snapshots kept (0: averaging off) */
    int count;          /* snapshots held so far, <= capacity */
    int next;           /* the ring slot the next snapshot goes to */
    size_t size;        /* floats per snapshot: the parameter count */
    float *data;        /* [capacity, size] */
} Snapshots;

void snapshots_init(Snapshots *s, int capacity, size_t size);
void snapshots_free(Snapshots *s); /* NULL-safe */
void snapshots_add(Snapshots *s, const float *params);
/* out[size] = the mean of the snapshots held (count >= 1). */
void snapshots_average(const Snapshots *s, float *out);

#endif
