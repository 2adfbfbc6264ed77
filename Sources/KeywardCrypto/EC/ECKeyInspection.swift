import COpenSSL

/// Reads the curve and the uncompressed public point out of an EC `EVP_PKEY` (EVP_PKEY-EC(7)).
enum ECKeyInspection {
    /// The key's curve and its `04 ‖ X ‖ Y` point, whatever point format it was loaded from.
    /// - Throws: ``CryptoError/invalidKey(_:)`` for a non-EC key or a curve other than P-256/P-384.
    static func curveAndPoint(of pkey: OpaquePointer) throws(CryptoError) -> (ECCurve, [UInt8]) {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC else { throw .invalidKey("not an EC key") }
        var name = [CChar](repeating: 0, count: 64)
        var nameLength = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &nameLength) == 1,
              let curve = ECCurve(groupName: String(decoding: name.prefix(nameLength).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        else {
            clearOpenSSLErrors()
            throw .invalidKey("unsupported curve")
        }
        // Fast path: the encoded point, when the key already holds it uncompressed (EVP_PKEY-EC(7)).
        var encoded = [UInt8](repeating: 0, count: curve.pointLength)
        var encodedLength = 0
        if EVP_PKEY_get_octet_string_param(pkey, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, &encoded, encoded.count, &encodedLength) == 1,
           encodedLength == curve.pointLength, encoded.first == 0x04 {
            return (curve, encoded)
        }
        clearOpenSSLErrors()
        // A compressed point: rebuild 04 ‖ X ‖ Y from the affine coordinates.
        var point: [UInt8] = [0x04]
        point.reserveCapacity(curve.pointLength)
        for parameter in [OSSL_PKEY_PARAM_EC_PUB_X, OSSL_PKEY_PARAM_EC_PUB_Y] {
            var bn: OpaquePointer?
            guard EVP_PKEY_get_bn_param(pkey, parameter, &bn) == 1, let bn else {
                clearOpenSSLErrors()
                throw .invalidKey("no public point")
            }
            defer { BN_free(bn) }
            var coordinate = [UInt8](repeating: 0, count: curve.coordinateLength)
            guard BN_bn2binpad(bn, &coordinate, Int32(curve.coordinateLength)) == Int32(curve.coordinateLength) else {
                throw .invalidKey("coordinate out of range")
            }
            point += coordinate
        }
        return (curve, point)
    }
}
