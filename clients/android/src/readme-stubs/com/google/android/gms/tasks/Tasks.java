// The shape of the Google Play services class the README's adapters use, only to compile them here (never shipped).
package com.google.android.gms.tasks;

public final class Tasks {
    public static <T> T await(Task<T> task) throws java.util.concurrent.ExecutionException, InterruptedException {
        throw new UnsupportedOperationException("stub");
    }
}
