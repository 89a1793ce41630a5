#include "CServerTrustLabShims.h"

int CServerTrustLabShims_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name) { return sk_GENERAL_NAME_push(names, name); }
long CServerTrustLabShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long len) { return SSL_set_tlsext_status_ocsp_resp(ssl, resp, len); }
long CServerTrustLabShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
long CServerTrustLabShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
long CServerTrustLabShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long CServerTrustLabShims_SSL_CTX_set_num_tickets(SSL_CTX *ctx, size_t count) { return SSL_CTX_set_num_tickets(ctx, count); }
unsigned long CServerTrustLabShims_SSL_OP_NO_TICKET(void) { return (unsigned long)SSL_OP_NO_TICKET; }
