#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 and deflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream)), which
// the Swift importer cannot call.
static inline int CZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

static inline int CZlib_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
#endif
