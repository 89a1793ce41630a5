#include "CServerTrustShims.h"
#include <string.h>
#include <stdlib.h>

STACK_OF(X509) *CServerTrustShims_sk_X509_new_null(void) { return sk_X509_new_null(); }
int CServerTrustShims_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
int CServerTrustShims_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *CServerTrustShims_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void CServerTrustShims_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
void CServerTrustShims_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

STACK_OF(X509_CRL) *CServerTrustShims_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }
int CServerTrustShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl) { return sk_X509_CRL_push(stack, crl); }
void CServerTrustShims_sk_X509_CRL_pop_free(STACK_OF(X509_CRL) *stack) { sk_X509_CRL_pop_free(stack, X509_CRL_free); }

int CServerTrustShims_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
GENERAL_NAME *CServerTrustShims_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) { return sk_GENERAL_NAME_value(names, index); }
void CServerTrustShims_GENERAL_NAMES_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
int CServerTrustShims_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name) { return sk_GENERAL_NAME_push(names, name); }

int CServerTrustShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack) { return sk_OPENSSL_STRING_num(stack); }
const char *CServerTrustShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index) { return sk_OPENSSL_STRING_value(stack, index); }

char *CServerTrustShims_crl_distribution_point_uris(X509 *cert) {
    STACK_OF(DIST_POINT) *points = X509_get_ext_d2i(cert, NID_crl_distribution_points, NULL, NULL);
    if (points == NULL) return NULL;
    size_t capacity = 256, used = 0;
    char *out = malloc(capacity);
    if (out == NULL) { sk_DIST_POINT_pop_free(points, DIST_POINT_free); return NULL; }
    out[0] = '\0';
    for (int i = 0; i < sk_DIST_POINT_num(points); i++) {
        DIST_POINT *point = sk_DIST_POINT_value(points, i);
        if (point->distpoint == NULL || point->distpoint->type != 0) continue;
        GENERAL_NAMES *names = point->distpoint->name.fullname;
        for (int j = 0; j < sk_GENERAL_NAME_num(names); j++) {
            GENERAL_NAME *name = sk_GENERAL_NAME_value(names, j);
            if (name->type != GEN_URI) continue;
            const unsigned char *data = ASN1_STRING_get0_data(name->d.uniformResourceIdentifier);
            int length = ASN1_STRING_length(name->d.uniformResourceIdentifier);
            if (length <= 0 || memchr(data, '\0', (size_t)length) != NULL) continue;
            while (used + (size_t)length + 2 > capacity) {
                capacity *= 2;
                char *grown = realloc(out, capacity);
                if (grown == NULL) { free(out); sk_DIST_POINT_pop_free(points, DIST_POINT_free); return NULL; }
                out = grown;
            }
            if (used > 0) out[used++] = '\n';
            memcpy(out + used, data, (size_t)length);
            used += (size_t)length;
            out[used] = '\0';
        }
    }
    sk_DIST_POINT_pop_free(points, DIST_POINT_free);
    if (used == 0) { free(out); return NULL; }
    return out;
}

void CServerTrustShims_free(void *pointer) { free(pointer); }

unsigned long CServerTrustShims_XN_FLAG_RFC2253_UTF8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(ctx, cb); }
long CServerTrustShims_SSL_CTX_set_tlsext_status_arg(SSL_CTX *ctx, void *arg) { return SSL_CTX_set_tlsext_status_arg(ctx, arg); }
long CServerTrustShims_SSL_set_tlsext_status_type(SSL *ssl, int type) { return SSL_set_tlsext_status_type(ssl, type); }
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **resp) {
    unsigned char *r = NULL;
    long len = SSL_get_tlsext_status_ocsp_resp(ssl, &r);
    *resp = r;
    return len;
}
long CServerTrustShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long len) { return SSL_set_tlsext_status_ocsp_resp(ssl, resp, len); }
long CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
long CServerTrustShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
long CServerTrustShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long CServerTrustShims_SSL_CTX_set_num_tickets(SSL_CTX *ctx, size_t count) { return SSL_CTX_set_num_tickets(ctx, count); }
unsigned long CServerTrustShims_SSL_CTX_set_options(SSL_CTX *ctx, unsigned long options) { return (unsigned long)SSL_CTX_set_options(ctx, options); }
unsigned long CServerTrustShims_SSL_OP_NO_TICKET(void) { return (unsigned long)SSL_OP_NO_TICKET; }
long CServerTrustShims_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) { return SSL_CTX_add_extra_chain_cert(ctx, cert); }
long CServerTrustShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
int CServerTrustShims_SSL_get_ex_new_index(void) { return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL); }
int CServerTrustShims_X509_STORE_CTX_get_ex_new_index(void) { return X509_STORE_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL); }

static void CServerTrustShims_release_ex_data(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
    (void)parent; (void)ad; (void)idx; (void)argl;
    if (ptr != NULL && argp != NULL) ((void (*)(void *))argp)(ptr);
}
int CServerTrustShims_SSL_CTX_get_ex_new_index_releasing(void (*release)(void *)) {
    return SSL_CTX_get_ex_new_index(0, (void *)release, NULL, NULL, CServerTrustShims_release_ex_data);
}
int CServerTrustShims_SSL_get_ex_new_index_releasing(void (*release)(void *)) {
    return SSL_get_ex_new_index(0, (void *)release, NULL, NULL, CServerTrustShims_release_ex_data);
}
unsigned long CServerTrustShims_SSL_OP_NO_RENEGOTIATION(void) { return (unsigned long)SSL_OP_NO_RENEGOTIATION; }

int CServerTrustShims_sk_ASN1_INTEGER_num(const STACK_OF(ASN1_INTEGER) *stack) { return sk_ASN1_INTEGER_num(stack); }
ASN1_INTEGER *CServerTrustShims_sk_ASN1_INTEGER_value(const STACK_OF(ASN1_INTEGER) *stack, int index) { return sk_ASN1_INTEGER_value(stack, index); }
long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type) { return SSL_CTX_set_tlsext_status_type(ctx, type); }
int CServerTrustShims_TLSEXT_STATUSTYPE_ocsp(void) { return TLSEXT_STATUSTYPE_ocsp; }
