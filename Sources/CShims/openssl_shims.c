#include "openssl_shims.h"

STACK_OF(X509) *keyward_sk_X509_new_null(void) { return sk_X509_new_null(); }
int keyward_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
void keyward_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
int keyward_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *keyward_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void keyward_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
unsigned long keyward_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

EVP_PKEY *keyward_ec_public_key_from_point(const char *group, const unsigned char *point, size_t length) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (ctx == NULL) return NULL;
    OSSL_PARAM params[3];
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, length);
    params[2] = OSSL_PARAM_construct_end();
    EVP_PKEY *pkey = NULL;
    if (EVP_PKEY_fromdata_init(ctx) != 1 || EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1) {
        EVP_PKEY_free(pkey);
        pkey = NULL;
    }
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

void keyward_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
int keyward_sk_CMS_SignerInfo_num(STACK_OF(CMS_SignerInfo) *stack) { return sk_CMS_SignerInfo_num(stack); }
CMS_SignerInfo *keyward_sk_CMS_SignerInfo_value(STACK_OF(CMS_SignerInfo) *stack, int index) {
    return sk_CMS_SignerInfo_value(stack, index);
}
