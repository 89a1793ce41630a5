#ifndef CSERVERTRUST_SHIMS_H
#define CSERVERTRUST_SHIMS_H

// Wrappers for OpenSSL macros (stack accessors, ctrl-based setters) that the Swift importer
// cannot call. Nothing else belongs here: plain OpenSSL functions are called directly.

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ocsp.h>
#include <openssl/bio.h>
#include <openssl/ct.h>

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

// STACK_OF(OPENSSL_STRING), as returned by X509_get1_ocsp
int CServerTrustShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack);
const char *CServerTrustShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index);

// XN_FLAG_RFC2253 with multi-byte characters printed as UTF-8 instead of escaped.
unsigned long CServerTrustShims_XN_FLAG_RFC2253_UTF8(void);

long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **data);

// SSL / SSL_CTX macros used by the TLS bridge.
long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *));
long CServerTrustShims_SSL_CTX_set_tlsext_status_arg(SSL_CTX *ctx, void *arg);
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **resp);
unsigned long CServerTrustShims_SSL_CTX_set_options(SSL_CTX *ctx, unsigned long options);

// ex_data slots whose value is released with `release` when the SSL_CTX / SSL is freed.
// (SSL_set_ex_data over an existing value does not release the old one: callers must.)
int CServerTrustShims_SSL_CTX_get_ex_new_index_releasing(void (*release)(void *));
int CServerTrustShims_SSL_get_ex_new_index_releasing(void (*release)(void *));
unsigned long CServerTrustShims_SSL_OP_NO_RENEGOTIATION(void);

// The protocol floor (SSL_CTX_set_min_proto_version and its getter are macros).
int CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
int CServerTrustShims_SSL_CTX_get_min_proto_version(SSL_CTX *ctx);

// STACK_OF(ASN1_INTEGER), as a TLS feature extension (RFC 7633) decodes to.
int CServerTrustShims_sk_ASN1_INTEGER_num(const STACK_OF(ASN1_INTEGER) *stack);
ASN1_INTEGER *CServerTrustShims_sk_ASN1_INTEGER_value(const STACK_OF(ASN1_INTEGER) *stack, int index);

long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type);
int CServerTrustShims_TLSEXT_STATUSTYPE_ocsp(void);

// Handshake evidence: the negotiated group's name (SSL_get_negotiated_group is a ctrl macro),
// the SCT stack accessors, and asking the server for SCTs in the TLS extension (a validation
// callback that accepts every list: ServerTrust's evaluators judge SCTs, OpenSSL only collects
// them).
//
// The group's name is NULL when none is known; else the OpenSSL short name of its NID
// ("X25519", "prime256v1": the same on every OpenSSL 3), or, for a group with no NID (the ML-KEM
// hybrids OpenSSL 3.5 negotiates by default, "X25519MLKEM768", "SecP256r1MLKEM768"), its TLS name
// from SSL_get0_group_name, which exists from OpenSSL 3.2 (compiled in by version; NULL before).
const char *CServerTrustShims_SSL_negotiated_group_name(SSL *ssl);
int CServerTrustShims_sk_SCT_num(const STACK_OF(SCT) *stack);
SCT *CServerTrustShims_sk_SCT_value(const STACK_OF(SCT) *stack, int index);
int CServerTrustShims_SSL_CTX_request_signed_certificate_timestamps(SSL_CTX *ctx);
int CServerTrustShims_SCT_SOURCE_TLS_EXTENSION(void);

// Out-parameters of ASN.1 string types, as untyped pointers: OpenSSL 4.0 makes ASN1_STRING,
// ASN1_TIME and their kin opaque, so Swift imports a pointer to one as OpaquePointer where
// OpenSSL 3 imported UnsafeMutablePointer<ASN1_STRING>; a `const void **` is the same in both
// (OpenSSLObjectPointer converts the results at each call).
int CServerTrustShims_OCSP_id_get0_info(const void **nameHash, const void **keyHash, const void **serial, OCSP_CERTID *cid);
int CServerTrustShims_OCSP_single_get0_status(
    OCSP_SINGLERESP *single, int *reason, const void **revocationTime, const void **thisUpdate, const void **nextUpdate);
int CServerTrustShims_OCSP_resp_get0_id(const OCSP_BASICRESP *basic, const void **keyHash, const X509_NAME **name);

#endif
