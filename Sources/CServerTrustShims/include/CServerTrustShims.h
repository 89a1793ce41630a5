#ifndef CSERVERTRUST_SHIMS_H
#define CSERVERTRUST_SHIMS_H

// Wrappers for OpenSSL macros (stack accessors, ctrl-based setters) that the Swift importer
// cannot call. Nothing else belongs here: plain OpenSSL functions are called directly.

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ocsp.h>
#include <openssl/bio.h>

// STACK_OF(X509)
STACK_OF(X509) *CServerTrustShims_sk_X509_new_null(void);
int CServerTrustShims_sk_X509_push(STACK_OF(X509) *stack, X509 *cert);
int CServerTrustShims_sk_X509_num(const STACK_OF(X509) *stack);
X509 *CServerTrustShims_sk_X509_value(const STACK_OF(X509) *stack, int index);
void CServerTrustShims_sk_X509_free(STACK_OF(X509) *stack);
void CServerTrustShims_sk_X509_pop_free(STACK_OF(X509) *stack);

// STACK_OF(X509_CRL)
STACK_OF(X509_CRL) *CServerTrustShims_sk_X509_CRL_new_null(void);
int CServerTrustShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl);
void CServerTrustShims_sk_X509_CRL_pop_free(STACK_OF(X509_CRL) *stack);

// GENERAL_NAMES
int CServerTrustShims_sk_GENERAL_NAME_num(const GENERAL_NAMES *names);
GENERAL_NAME *CServerTrustShims_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index);
void CServerTrustShims_GENERAL_NAMES_free(GENERAL_NAMES *names);
int CServerTrustShims_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name);

// STACK_OF(OPENSSL_STRING), as returned by X509_get1_ocsp
int CServerTrustShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack);
const char *CServerTrustShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index);

// CRL distribution points: the URIs of every fullName of every point, as a newline-joined string
// the caller frees with CServerTrustShims_free. NULL when there are none.
char *CServerTrustShims_crl_distribution_point_uris(X509 *cert);

void CServerTrustShims_free(void *pointer);

// XN_FLAG_RFC2253 with multi-byte characters printed as UTF-8 instead of escaped.
unsigned long CServerTrustShims_XN_FLAG_RFC2253_UTF8(void);

long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **data);

// SSL / SSL_CTX macros used by the TLS bridge and the test server.
long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *));
long CServerTrustShims_SSL_CTX_set_tlsext_status_arg(SSL_CTX *ctx, void *arg);
long CServerTrustShims_SSL_set_tlsext_status_type(SSL *ssl, int type);
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **resp);
long CServerTrustShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long len);
long CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
long CServerTrustShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long CServerTrustShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
long CServerTrustShims_SSL_CTX_set_num_tickets(SSL_CTX *ctx, size_t count);
unsigned long CServerTrustShims_SSL_CTX_set_options(SSL_CTX *ctx, unsigned long options);
unsigned long CServerTrustShims_SSL_OP_NO_TICKET(void);
long CServerTrustShims_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert);
long CServerTrustShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
int CServerTrustShims_SSL_get_ex_new_index(void);
int CServerTrustShims_X509_STORE_CTX_get_ex_new_index(void);


// ex_data slots whose value is released with `release` when the SSL_CTX / SSL is freed.
// (SSL_set_ex_data over an existing value does not release the old one: callers must.)
int CServerTrustShims_SSL_CTX_get_ex_new_index_releasing(void (*release)(void *));
int CServerTrustShims_SSL_get_ex_new_index_releasing(void (*release)(void *));
unsigned long CServerTrustShims_SSL_OP_NO_RENEGOTIATION(void);

// STACK_OF(ASN1_INTEGER), as a TLS feature extension (RFC 7633) decodes to.
int CServerTrustShims_sk_ASN1_INTEGER_num(const STACK_OF(ASN1_INTEGER) *stack);
ASN1_INTEGER *CServerTrustShims_sk_ASN1_INTEGER_value(const STACK_OF(ASN1_INTEGER) *stack, int index);

long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type);
int CServerTrustShims_TLSEXT_STATUSTYPE_ocsp(void);

#endif
