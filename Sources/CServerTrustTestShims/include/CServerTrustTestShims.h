#ifndef CSERVERTRUST_TEST_SHIMS_H
#define CSERVERTRUST_TEST_SHIMS_H

// Wrappers for the OpenSSL macros that only ServerTrustTestSupport (the intercepting proxy's
// client side) calls. Test-only: only ServerTrustTestSupport depends on this target, so the
// shipping `servertrust` binary holds none of it (scripts/check-shipping-binary.sh checks).

#include <openssl/ssl.h>

long CServerTrustTestShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name);

#endif
