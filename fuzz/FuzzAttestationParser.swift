// libFuzzer target: the App Attest decoding layer (attestation object, assertion, authenticatorData in
// both layouts, nonce extension) on arbitrary bytes. Errors are values; any trap is a bug.
import AppAttest

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAttestationParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let object = try? AttestationObject(bytes: bytes) {
        precondition(object.format == AttestationObject.appleFormat)
        precondition(object.authenticatorData.attestedCredential != nil)
    }
    _ = try? AssertionObject(bytes: bytes)
    if let parsed = try? AuthenticatorData(bytes: bytes, layout: .attestation) {
        precondition(parsed.bytes == bytes && parsed.rpIDHash.count == 32)
    }
    _ = try? AuthenticatorData(bytes: bytes, layout: .assertion)
    if let nonce = try? NonceExtension.nonce(fromExtensionValue: bytes) {
        precondition(nonce.count == 32 && size == 38)
    }
    return 0
}
