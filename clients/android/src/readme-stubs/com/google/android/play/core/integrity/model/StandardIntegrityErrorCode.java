// The shape of the Play Integrity constants the README's adapters use, only to compile them here (never shipped).
package com.google.android.play.core.integrity.model;

public final class StandardIntegrityErrorCode {
    public static final int API_NOT_AVAILABLE = -1;
    public static final int PLAY_STORE_NOT_FOUND = -2;
    public static final int PLAY_SERVICES_NOT_FOUND = -6;
    public static final int INTEGRITY_TOKEN_PROVIDER_INVALID = -19;
}
