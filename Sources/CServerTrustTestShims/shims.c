#include "CServerTrustTestShims.h"

long CServerTrustTestShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
