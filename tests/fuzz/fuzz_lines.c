/* fuzz_lines.c — arbitrary bytes as translate's standard input, split by
 * line_read exactly as `translate` does in batch mode (with a small limit,
 * so long lines are common).  Checks it against a plain reading of the
 * same bytes: one result per line, in order, each line's bytes (NUL bytes
 * included) without its "\n" or "\r\n", too-long lines reported as such. */
#include "fuzz.h"

#include "../../common/line.h"

enum { MAX = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *in = fmemopen((void *)data, size, "rb");
    if (size == 0) in = fopen("/dev/null", "rb"); /* fmemopen refuses size 0 */
    FUZZ_CHECK(in != NULL);
    char buf[MAX + 1];
    size_t at = 0; /* where the expected next line starts */
    long n;
    while ((n = line_read(in, buf, MAX)) != LINE_EOF) {
        FUZZ_CHECK(at < size);
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size, len = end - at;
        if (len > 0 && data[end - 1] == '\r') len--; /* the ending never counts against MAX */
        if (len > MAX) {
            FUZZ_CHECK(n == LINE_TOO_LONG);
        } else {
            FUZZ_CHECK(n == (long)len && memcmp(buf, data + at, len) == 0 && buf[len] == '\0');
        }
        at = nl ? end + 1 : size;
    }
    FUZZ_CHECK(at == size);
    fclose(in);
    return 0;
}
