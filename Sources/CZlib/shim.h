#ifndef STRATA_CZLIB_SHIM_H
#define STRATA_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros; Swift cannot import them.
static inline int strata_deflate_init2(z_streamp strm, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, memLevel, strategy);
}
static inline int strata_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
#endif
