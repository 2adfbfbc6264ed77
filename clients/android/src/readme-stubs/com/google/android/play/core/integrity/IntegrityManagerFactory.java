// The shape of the Play Integrity class the README's adapters use, only to compile them here (never shipped).
package com.google.android.play.core.integrity;

import android.content.Context;

public final class IntegrityManagerFactory {
    public static StandardIntegrityManager createStandard(Context context) {
        throw new UnsupportedOperationException("stub");
    }
}
