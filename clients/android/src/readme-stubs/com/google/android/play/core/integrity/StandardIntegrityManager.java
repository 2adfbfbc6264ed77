// The shape of the Play Integrity interface the README's adapters use, only to compile them here (never shipped).
package com.google.android.play.core.integrity;

import com.google.android.gms.tasks.Task;

public interface StandardIntegrityManager {
    Task<StandardIntegrityTokenProvider> prepareIntegrityToken(PrepareIntegrityTokenRequest request);

    interface StandardIntegrityTokenProvider {
        Task<StandardIntegrityToken> request(StandardIntegrityTokenRequest request);
    }

    abstract class StandardIntegrityToken {
        public abstract String token();
    }

    abstract class PrepareIntegrityTokenRequest {
        public static Builder builder() {
            throw new UnsupportedOperationException("stub");
        }

        public abstract static class Builder {
            public abstract Builder setCloudProjectNumber(long number);

            public abstract PrepareIntegrityTokenRequest build();
        }
    }

    abstract class StandardIntegrityTokenRequest {
        public static Builder builder() {
            throw new UnsupportedOperationException("stub");
        }

        public abstract static class Builder {
            public abstract Builder setRequestHash(String requestHash);

            public abstract StandardIntegrityTokenRequest build();
        }
    }
}
