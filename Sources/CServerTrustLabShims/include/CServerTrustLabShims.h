#ifndef CSERVERTRUST_LAB_SHIMS_H
#define CSERVERTRUST_LAB_SHIMS_H

// Wrappers for the OpenSSL macros that only ServerTrustLab (its certificate builder and local
// TLS server) calls; those the library calls too stay in CServerTrustShims, which the lab also
// imports. Nothing else belongs here: plain OpenSSL functions are called directly.

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

int CServerTrustLabShims_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name);
long CServerTrustLabShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long len);
long CServerTrustLabShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
long CServerTrustLabShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long CServerTrustLabShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
long CServerTrustLabShims_SSL_CTX_set_num_tickets(SSL_CTX *ctx, size_t count);
unsigned long CServerTrustLabShims_SSL_OP_NO_TICKET(void);

#endif
