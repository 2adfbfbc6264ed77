#if canImport(Security)
import Foundation
import Security

/// ``KeyIDStore`` in the Keychain, as a generic password readable only on this device after its
/// first unlock (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`): an App Attest key never
/// leaves its device, so neither may its id (a backup restored elsewhere starts with a new key).
public struct KeychainKeyIDStore: KeyIDStore {
    /// `kSecAttrService` of the item (e.g. your bundle id).
    public let service: String
    /// `kSecAttrAccount` of the item.
    public let account: String

    /// - Parameters:
    ///   - service: `kSecAttrService` (default `dev.keyward.client`).
    ///   - account: `kSecAttrAccount` (default `app-attest-key-id`).
    public init(service: String = "dev.keyward.client", account: String = "app-attest-key-id") {
        self.service = service
        self.account = account
    }

    private var baseQuery: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    /// The stored id, nil when there is none. Throws ``KeywardError/keyStoreFailed(_:)`` with the OSStatus.
    public func loadKeyID() throws -> String? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeywardError.keyStoreFailed("SecItemCopyMatching \(status)") }
        return String(data: data, encoding: .utf8)
    }

    /// Replaces the stored id. Throws ``KeywardError/keyStoreFailed(_:)`` with the OSStatus.
    public func saveKeyID(_ keyID: String) throws {
        try deleteKeyID()
        var attributes = baseQuery
        attributes[kSecValueData as String] = Data(keyID.utf8)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else { throw KeywardError.keyStoreFailed("SecItemAdd \(status)") }
    }

    /// Removes the stored id (no error when there is none). Throws ``KeywardError/keyStoreFailed(_:)``.
    public func deleteKeyID() throws {
        let status = SecItemDelete(baseQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeywardError.keyStoreFailed("SecItemDelete \(status)") }
    }
}
#endif
