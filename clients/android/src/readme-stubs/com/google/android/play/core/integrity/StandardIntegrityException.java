// The shape of the Play Integrity class the README's adapters use, only to compile them here (never shipped).
package com.google.android.play.core.integrity;

public class StandardIntegrityException extends Exception {
    private static final long serialVersionUID = 1L;

    public int getErrorCode() {
        return 0;
    }
}
