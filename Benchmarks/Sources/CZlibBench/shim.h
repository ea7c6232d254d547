#include <zlib.h>

// deflateInit2 and inflateInit2 are macros; Swift cannot import them.
static inline int bench_deflate_init2(z_streamp strm, int level, int windowBits) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
static inline int bench_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
