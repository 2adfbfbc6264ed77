// The shape of the Jetpack Security class the README's adapters use, only to compile them here (never shipped).
package androidx.security.crypto;

import android.content.Context;

public final class MasterKey {
    public enum KeyScheme { AES256_GCM }

    public static final class Builder {
        public Builder(Context context) {}

        public Builder setKeyScheme(KeyScheme scheme) {
            return this;
        }

        public MasterKey build() throws java.security.GeneralSecurityException, java.io.IOException {
            throw new UnsupportedOperationException("stub");
        }
    }
}
