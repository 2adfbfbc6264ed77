import COpenSSL

/// Runs `body` with a read-only memory BIO over `bytes`.
///
/// `BIO_new_mem_buf` does not copy (BIO_s_mem(3)): the BIO is only valid while the buffer is
/// pinned, so it never escapes this function.
func withReadOnlyBIO<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(CryptoError) -> R) throws(CryptoError) -> R {
    let result: Result<R, CryptoError> = bytes.withUnsafeBytes { raw in
        guard raw.count <= Int(Int32.max),
              let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
        else { return .failure(.internalFailure("BIO_new_mem_buf")) }
        defer { BIO_free(bio) }
        do throws(CryptoError) { return .success(try body(bio)) } catch { return .failure(error) }
    }
    return try result.get()
}

/// Creates a growable memory BIO, lets `write` fill it and returns everything written.
func bytesWrittenToBIO(_ write: (OpaquePointer) -> Bool) throws(CryptoError) -> [UInt8] {
    guard let bio = BIO_new(BIO_s_mem()) else { throw .internalFailure("BIO_new") }
    defer { BIO_free(bio) }
    guard write(bio) else {
        clearOpenSSLErrors()
        throw .internalFailure("write to BIO")
    }
    let pending = Int(BIO_ctrl_pending(bio))
    var out = [UInt8](repeating: 0, count: pending)
    let read = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
    guard read == pending else { throw .internalFailure("BIO_read") }
    return out
}

/// Writes `body`'s `i2d_*` encoding: first asks for the length, then encodes into an exact buffer,
/// so no OpenSSL-owned memory has to be freed.
func derEncoded(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws(CryptoError) -> [UInt8] {
    let length = encode(nil)
    guard length > 0 else { throw .internalFailure("i2d length") }
    var out = [UInt8](repeating: 0, count: Int(length))
    let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
        return encode(&cursor)
    }
    guard written == length else { throw .internalFailure("i2d") }
    return out
}
