// The shape of the Google Play services class the README's adapters use, only to compile them here (never shipped).
package com.google.android.gms.tasks;

public abstract class Task<T> {}
