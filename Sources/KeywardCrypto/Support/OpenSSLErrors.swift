import COpenSSL

/// Empties this thread's OpenSSL error queue after a refused input, so a stale entry can never
/// be attributed to a later, unrelated call (OpenSSL queues are per thread, ERR_get_error(3)).
@inline(__always)
func clearOpenSSLErrors() {
    ERR_clear_error()
}
