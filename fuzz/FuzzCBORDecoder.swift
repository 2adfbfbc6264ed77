// libFuzzer target: the strict CBOR decoder on arbitrary bytes.
// Property checked besides "never traps": whatever decodes re-encodes (preferred serialization)
// to bytes that decode to the same value.
import CBOR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCBORDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let decoder = CBORDecoder()
    if let value = try? decoder.decode(bytes) {
        let again = try? decoder.decode(CBOREncoder.encode(value))
        precondition(again == value, "re-encoded value decodes differently")
    }
    if size > 0 {
        // The prefix form must never claim more than it was given.
        if let (_, consumed) = try? decoder.decodePrefix(bytes[1...]) {
            precondition(consumed >= 1 && consumed <= size - 1, "decodePrefix consumed out of range")
        }
    }
    return 0
}
