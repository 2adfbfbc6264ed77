// libFuzzer target: the App Attest receipt payload reader (`ReceiptPayload`, strict DER SET OF
// SEQUENCE { INTEGER, INTEGER, OCTET STRING }) and the typed fields over it (`AppAttestReceipt`),
// on arbitrary bytes. Errors are values; any trap is a bug. Properties: whatever the reader accepts
// re-encodes, in DER, to exactly the input (so it accepts one encoding per value), within its
// bounds; an accepted receipt has the fields its type requires.
import AppAttest

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceiptPayload(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let attributes = try? ReceiptPayload.attributes(bytes) {
        precondition(attributes.count <= ReceiptPayload.maxAttributes)
        precondition(encode(attributes) == bytes, "accepted payload does not re-encode to itself")
    }
    if let receipt = try? AppAttestReceipt(payload: bytes) {
        precondition(!receipt.appID.isEmpty && !receipt.attestedKeyCertificate.isEmpty)
        switch receipt.kind {
        case .attest: precondition(receipt.clientHash != nil)
        case .receipt: precondition(receipt.riskMetric != nil)
        }
        if let metric = receipt.riskMetric { precondition(metric >= 0 && metric <= AppAttestReceipt.maxRiskMetric) }
        precondition(receipt.creationTime >= 0 && receipt.expirationTime >= 0)
    }
    return 0
}

/// DER of the attributes, written independently of the reader.
private func encode(_ attributes: [ReceiptAttribute]) -> [UInt8] {
    var members: [UInt8] = []
    for attribute in attributes {
        members += tlv(0x30, tlv(0x02, integer(attribute.type)) + tlv(0x02, integer(attribute.version)) + tlv(0x04, attribute.value))
    }
    return tlv(0x31, members)
}

private func integer(_ value: Int) -> [UInt8] {
    var out: [UInt8] = []
    var rest = value
    repeat {
        out.insert(UInt8(rest & 0xff), at: 0)
        rest >>= 8
    } while rest > 0
    if out[0] & 0x80 != 0 { out.insert(0, at: 0) }
    return out
}

private func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
    var length: [UInt8] = []
    if contents.count < 0x80 {
        length = [UInt8(contents.count)]
    } else {
        var rest = contents.count
        while rest > 0 {
            length.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        length.insert(0x80 | UInt8(length.count), at: 0)
    }
    return [tag] + length + contents
}
