// The shape of the Android interface the README's adapters use, only to compile them here (never shipped).
package android.content;

public interface SharedPreferences {
    String getString(String key, String defaultValue);

    Editor edit();

    interface Editor {
        Editor putString(String key, String value);

        Editor remove(String key);

        boolean commit();
    }
}
