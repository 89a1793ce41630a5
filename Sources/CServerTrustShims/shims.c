#include "CServerTrustShims.h"

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

int CServerTrustShims_sk_OPENSSL_STRING_num(const STACK_OF(OPENSSL_STRING) *stack) { return sk_OPENSSL_STRING_num(stack); }
const char *CServerTrustShims_sk_OPENSSL_STRING_value(const STACK_OF(OPENSSL_STRING) *stack, int index) { return sk_OPENSSL_STRING_value(stack, index); }

unsigned long CServerTrustShims_XN_FLAG_RFC2253_UTF8(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }

long CServerTrustShims_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

long CServerTrustShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(ctx, cb); }
long CServerTrustShims_SSL_CTX_set_tlsext_status_arg(SSL_CTX *ctx, void *arg) { return SSL_CTX_set_tlsext_status_arg(ctx, arg); }
long CServerTrustShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **resp) {
    unsigned char *r = NULL;
    long len = SSL_get_tlsext_status_ocsp_resp(ssl, &r);
    *resp = r;
    return len;
}
unsigned long CServerTrustShims_SSL_CTX_set_options(SSL_CTX *ctx, unsigned long options) { return (unsigned long)SSL_CTX_set_options(ctx, options); }

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
int CServerTrustShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return (int)SSL_CTX_set_min_proto_version(ctx, version); }
int CServerTrustShims_SSL_CTX_get_min_proto_version(SSL_CTX *ctx) { return (int)SSL_CTX_get_min_proto_version(ctx); }

int CServerTrustShims_sk_ASN1_INTEGER_num(const STACK_OF(ASN1_INTEGER) *stack) { return sk_ASN1_INTEGER_num(stack); }
ASN1_INTEGER *CServerTrustShims_sk_ASN1_INTEGER_value(const STACK_OF(ASN1_INTEGER) *stack, int index) { return sk_ASN1_INTEGER_value(stack, index); }
long CServerTrustShims_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type) { return SSL_CTX_set_tlsext_status_type(ctx, type); }
int CServerTrustShims_TLSEXT_STATUSTYPE_ocsp(void) { return TLSEXT_STATUSTYPE_ocsp; }

const char *CServerTrustShims_SSL_negotiated_group_name(SSL *ssl) {
    int group = (int)SSL_get_negotiated_group(ssl);
    if (group <= 0) return NULL;
    // A group without a NID comes back as TLSEXT_nid_unknown | its TLS group ID.
    if ((group & TLSEXT_nid_unknown) == 0) {
        const char *name = OBJ_nid2sn(group);
        if (name != NULL) return name;
    }
#if OPENSSL_VERSION_NUMBER >= 0x30200000L
    return SSL_get0_group_name(ssl);
#else
    return NULL;
#endif
}
int CServerTrustShims_sk_SCT_num(const STACK_OF(SCT) *stack) { return sk_SCT_num(stack); }
SCT *CServerTrustShims_sk_SCT_value(const STACK_OF(SCT) *stack, int index) { return sk_SCT_value(stack, index); }
static int CServerTrustShims_accept_scts(const CT_POLICY_EVAL_CTX *ctx, const STACK_OF(SCT) *scts, void *arg) {
    (void)ctx; (void)scts; (void)arg;
    return 1;
}
int CServerTrustShims_SSL_CTX_request_signed_certificate_timestamps(SSL_CTX *ctx) {
    return SSL_CTX_set_ct_validation_callback(ctx, CServerTrustShims_accept_scts, NULL);
}
int CServerTrustShims_SCT_SOURCE_TLS_EXTENSION(void) { return SCT_SOURCE_TLS_EXTENSION; }

int CServerTrustShims_OCSP_id_get0_info(const void **nameHash, const void **keyHash, const void **serial, OCSP_CERTID *cid) {
    ASN1_OCTET_STRING *name = NULL, *key = NULL;
    ASN1_INTEGER *number = NULL;
    int ok = OCSP_id_get0_info(&name, NULL, &key, &number, cid);
    *nameHash = name;
    *keyHash = key;
    *serial = number;
    return ok;
}

int CServerTrustShims_OCSP_single_get0_status(
    OCSP_SINGLERESP *single, int *reason, const void **revocationTime, const void **thisUpdate, const void **nextUpdate) {
    ASN1_GENERALIZEDTIME *revoked = NULL, *this = NULL, *next = NULL;
    int status = OCSP_single_get0_status(single, reason, &revoked, &this, &next);
    *revocationTime = revoked;
    *thisUpdate = this;
    *nextUpdate = next;
    return status;
}

int CServerTrustShims_OCSP_resp_get0_id(const OCSP_BASICRESP *basic, const void **keyHash, const X509_NAME **name) {
    const ASN1_OCTET_STRING *key = NULL;
    int ok = OCSP_resp_get0_id(basic, &key, name);
    *keyHash = key;
    return ok;
}
