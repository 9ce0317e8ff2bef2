/* clones.h — loops compiled once per vector width.
 *
 * The build's baseline is x86-64's SSE2: 4 floats per instruction.  A
 * function marked CLONES is compiled three times, for AVX-512, AVX2 and
 * that baseline, and the loader picks the widest this CPU runs when the
 * program starts (GCC's target_clones).  Only the width changes: GCC
 * neither reorders float sums nor fuses multiply-adds under -std=c11, so
 * every clone gives the same bits.  Off x86-64, or without GCC's
 * extensions, CLONES is nothing and the one plain copy runs.
 *
 * Marked: vector.c's loops, and the passes over whole activations and
 * parameters outside the matrix products (elementwise.c, layernorm.c,
 * training/optim.c).  Those took 1-2% of a 1-thread training step each;
 * cloned, the steps went from 9,486 to 9,679 tokens/s (an AMD EPYC, Zen
 * 5: build/bench/train_bench, medians of 5 alternated runs) and the
 * trained weights kept their bits.
 *
 * clang (make fuzz, the web page) is GCC-like enough to clone too, but it
 * fuses multiply-adds by default, which AVX2 and AVX-512 have and SSE2
 * has not: a file including this header turns that off, so its clones
 * keep GCC's bits under clang as well.
 *
 * Mark static functions only, each name used in one file: clang 14 names
 * target_clones' dispatcher "f.ifunc" and never defines "f" itself, so
 * under clang no other file could link to a clone (model/vector.c has its
 * own way around that), and it makes "f.resolver" global even for a
 * static f, so two files' static f would clash at link time. */
#ifndef TRANSLATE_CLONES_H
#define TRANSLATE_CLONES_H

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define CLONE_TARGETS "avx512f", "avx2", "default"
#define CLONES __attribute__((target_clones(CLONE_TARGETS)))
#else
#define CLONES
#endif

#endif
