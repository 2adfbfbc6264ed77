// The shape of the Jetpack Security class the README's adapters use, only to compile them here (never shipped).
package androidx.security.crypto;

import android.content.Context;
import android.content.SharedPreferences;

public final class EncryptedSharedPreferences {
    public enum PrefKeyEncryptionScheme { AES256_SIV }

    public enum PrefValueEncryptionScheme { AES256_GCM }

    public static SharedPreferences create(Context context, String fileName, MasterKey masterKey,
            PrefKeyEncryptionScheme keyScheme, PrefValueEncryptionScheme valueScheme)
            throws java.security.GeneralSecurityException, java.io.IOException {
        throw new UnsupportedOperationException("stub");
    }
}
