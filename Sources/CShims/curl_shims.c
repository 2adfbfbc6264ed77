#define _GNU_SOURCE  // pthread_setname_np
#include <pthread.h>
#include <string.h>
#include "curl_shims.h"

CURLcode kw_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode kw_curl_easy_set_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

CURLcode kw_curl_easy_set_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

CURLcode kw_curl_easy_set_prereq_function(CURL *handle, curl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode kw_curl_easy_getinfo_private(CURL *handle, void **value) {
    return curl_easy_getinfo(handle, CURLINFO_PRIVATE, value);
}

CURLMcode kw_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

size_t kw_curl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }

int kw_curl_pause_cont(void) { return CURLPAUSE_CONT; }

int kw_curl_msg_done(const CURLMsg *message, CURL **handle, CURLcode *result) {
    *handle = message->easy_handle;
    if (message->msg != CURLMSG_DONE) return 0;
    *result = message->data.result;
    return 1;
}

void kw_set_current_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    pthread_setname_np(pthread_self(), truncated);
}
