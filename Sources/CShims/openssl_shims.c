#include "openssl_shims.h"

STACK_OF(X509) *keyward_sk_X509_new_null(void) { return sk_X509_new_null(); }
int keyward_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
void keyward_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
int keyward_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *keyward_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void keyward_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
unsigned long keyward_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
