/* test_f16.c — float16 widening on every one of the 65,536 bit patterns,
 * through both paths: the portable scalar code (called directly, so it is
 * checked even on a CPU where F16C does the bulk of the work) and
 * safetensors_to_f32 reading a file (F16C for runs of 8 where the CPU has
 * it, the scalar code for the rest).
 *
 * The expected value is computed here independently of model/: from the
 * IEEE 754 binary16 fields with ldexp — sign · 2^(e-15) · (1 + m/1024) for
 * normal numbers, sign · 2^-14 · m/1024 for subnormals, ±inf, and NaN for
 * e = 31, m != 0 (the scalar code keeps the payload, m << 13, and the sign;
 * F16C quietens a signalling NaN, so the file path is checked for a NaN of
 * the right sign only). */
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../model/safetensors.h"

static double expected(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(1024 + m, e - 25);
    return sign ? -v : v;
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* One value: 0 if right, else 1 (the first few wrong ones are printed). */
static int check(uint16_t h, float got, int exact_nan)
{
    static int printed;
    double want = expected(h);
    int ok;
    if (isnan(want))
        ok = isnan(got) && !signbit(got) == !signbit(want) &&
             (!exact_nan || bits_of(got) == (((uint32_t)(h & 0x8000) << 16) | 0x7f800000u | ((uint32_t)(h & 0x3ff) << 13)));
    else
        ok = (double)got == want && !signbit(got) == !signbit(want); /* -0 stays -0 */
    if (!ok && printed++ < 10)
        print_message("  0x%04x: widened to %.9g (bits 0x%08x), expected %.9g\n", h, (double)got, bits_of(got), want);
    return !ok;
}

static void test_scalar_widening_of_all_65536_values(void **state)
{
    (void)state;
    int wrong = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) wrong += check((uint16_t)h, safetensors_f16_to_f32_scalar((uint16_t)h), 1);
    if (wrong) fail_msg("the scalar float16 widening got %d of 65,536 values wrong", wrong);
}

/* A safetensors file with tensor "all" = every bit pattern in order and
 * "tail" = 7 patterns (too few for an 8-wide F16C step: all scalar). */
static const uint16_t tail[7] = {0x0001, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0x7c01, 0xfe00};

static const char *write_f16_file(void)
{
    char header[256];
    int n = snprintf(header, sizeof header,
                     "{\"all\":{\"dtype\":\"F16\",\"shape\":[65536],\"data_offsets\":[0,131072]},"
                     "\"tail\":{\"dtype\":\"F16\",\"shape\":[7],\"data_offsets\":[131072,131086]}}");
    while (n % 8) header[n++] = ' ';
    size_t size = 8 + (size_t)n + 2 * (65536 + 7);
    static unsigned char file[8 + 256 + 2 * (65536 + 7)];
    for (int i = 0; i < 8; i++) file[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(file + 8, header, (size_t)n);
    unsigned char *p = file + 8 + n;
    for (uint32_t h = 0; h <= 0xffff; h++, p += 2) p[0] = (unsigned char)h, p[1] = (unsigned char)(h >> 8);
    for (int i = 0; i < 7; i++, p += 2) p[0] = (unsigned char)tail[i], p[1] = (unsigned char)(tail[i] >> 8);
    return temp_file("all-f16.safetensors", file, size);
}

static void test_reading_all_65536_values_from_a_file(void **state)
{
    (void)state;
    SafeFile f;
    Error err = {{0}};
    if (safetensors_open(write_f16_file(), &f, &err)) fail_msg("%s", err.message);
    static float all[65536];
    float rest[7];
    assert_int_equal(safetensors_to_f32(&f, safetensors_find(&f, "all"), all, &err), 0);
    assert_int_equal(safetensors_to_f32(&f, safetensors_find(&f, "tail"), rest, &err), 0);
    safetensors_close(&f);
    int wrong = 0;
    for (uint32_t h = 0; h <= 0xffff; h++) wrong += check((uint16_t)h, all[h], 0);
    for (int i = 0; i < 7; i++) wrong += check(tail[i], rest[i], 1);
    if (wrong) fail_msg("safetensors_to_f32 got %d float16 values wrong", wrong);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_widening_of_all_65536_values),
        cmocka_unit_test(test_reading_all_65536_values_from_a_file),
    };
    return cmocka_run_group_tests_name("float16 widening", tests, NULL, NULL);
}
