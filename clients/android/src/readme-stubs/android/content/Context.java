// The shape of the Android class the README's adapters use, only to compile them here (never shipped).
package android.content;

public abstract class Context {
    public abstract Context getApplicationContext();

    public abstract String getPackageName();
}
