#pragma once
// OpenSSL 3 helpers Swift cannot call directly: function-like macros (sk_X509_*, OPENSSL_free)
// and flag macros built from other macros (XN_FLAG_RFC2253). Owned by KeywardCrypto.
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/evp.h>

/// sk_X509_new_null(): an empty, unowned stack of certificates.
STACK_OF(X509) *keyward_sk_X509_new_null(void);
/// sk_X509_push(): appends without taking a reference; returns the new count, 0 on failure.
int keyward_sk_X509_push(STACK_OF(X509) *stack, X509 *cert);
/// sk_X509_free(): frees the stack only, not the certificates it lists.
void keyward_sk_X509_free(STACK_OF(X509) *stack);
/// sk_X509_num(): number of certificates, -1 for NULL.
int keyward_sk_X509_num(const STACK_OF(X509) *stack);
/// sk_X509_value(): borrowed certificate at `index`, NULL when out of range.
X509 *keyward_sk_X509_value(const STACK_OF(X509) *stack, int index);
/// OPENSSL_free(): frees memory OpenSSL allocated for us.
void keyward_OPENSSL_free(void *pointer);
/// XN_FLAG_RFC2253 for X509_NAME_print_ex (RFC 2253 one-line form).
unsigned long keyward_XN_FLAG_RFC2253(void);
/// An EC public key from a named group ("prime256v1", "secp384r1") and an X9.62 point, through
/// EVP_PKEY_fromdata (OSSL_PARAM arrays hold pointers to their key names, which must outlive
/// the call: simplest built in C). The point is checked to lie on the curve. NULL on failure.
EVP_PKEY *keyward_ec_public_key_from_point(const char *group, const unsigned char *point, size_t length);

#include <openssl/cms.h>

/// sk_X509_pop_free(stack, X509_free): frees a stack CMS_get1_certs(3) returned and the
/// references it holds.
void keyward_sk_X509_pop_free(STACK_OF(X509) *stack);
/// sk_CMS_SignerInfo_num(): number of signers of a SignedData, -1 for NULL.
int keyward_sk_CMS_SignerInfo_num(STACK_OF(CMS_SignerInfo) *stack);
/// sk_CMS_SignerInfo_value(): borrowed signer at `index`, NULL when out of range.
CMS_SignerInfo *keyward_sk_CMS_SignerInfo_value(STACK_OF(CMS_SignerInfo) *stack, int index);
