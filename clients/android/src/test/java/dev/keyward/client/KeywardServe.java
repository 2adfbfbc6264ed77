package dev.keyward.client;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The production binary as an operator runs it: {@code keyward serve --config keyward.toml} in its
 * own process, with its SQLite store, session key file and secrets, pointed at the fakes of
 * {@code keyward-demo android-fixture --fakes-only} (the fake Google through {@code [android.google]},
 * the fake provider through {@code providers.toml}). The binary comes from the system property
 * {@code keyward.binary} (clients/android/test.sh sets it). Keyward here keeps the system clock.
 */
final class KeywardServe {
    final Process fakes;
    final Process serve;
    final Path directory;
    final Map<String, String> environment;
    final String binary;
    final String baseUrl;
    final FixtureControl control;
    final String appKey;
    final String packageName;
    final long dailyCredits;
    final long costlyCost;

    KeywardServe() throws Exception {
        binary = System.getProperty("keyward.binary");
        String demo = System.getProperty("keyward.demo");
        if (binary == null || demo == null) throw new IllegalStateException("set -Dkeyward.binary and -Dkeyward.demo (clients/android/test.sh does)");
        fakes = new ProcessBuilder(demo, "android-fixture", "--fakes-only").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(fakes.getInputStream(), StandardCharsets.UTF_8)).readLine();
        Map<String, Object> config = line == null ? null : Json.parseObject(line);
        if (config == null) throw new IOException("keyward-demo android-fixture --fakes-only did not announce itself");
        control = new FixtureControl((String) config.get("control_url"));
        appKey = (String) config.get("app_key");
        packageName = (String) config.get("package_name");
        dailyCredits = (Long) config.get("install_daily_credits");
        costlyCost = (Long) config.get("costly_cost");

        directory = Files.createTempDirectory("keyward-serve-");
        int proxyPort = freePort();
        int adminPort = freePort();
        String google = (String) config.get("google_url");
        Files.writeString(directory.resolve("keyward.toml"), String.join("\n",
                "providers_file = \"providers.toml\"",
                "[listen]",
                "proxy = \"127.0.0.1:" + proxyPort + "\"",
                "admin = \"127.0.0.1:" + adminPort + "\"",
                "[store]",
                "url = \"sqlite://" + directory.resolve("keyward.sqlite") + "\"",
                "[handshake]",
                "per_ip_per_minute = 100000",
                "burst = 10000",
                "require_app_key = true",
                "[android]",
                "package_names = [\"" + packageName + "\"]",
                "signing_cert_digests = [\"" + config.get("certificate_digest_hex") + "\"]",
                "mode = \"standard\"",
                "[android.google]",
                "play_integrity_url = \"" + google + "\"",
                "token_url = \"" + google + "/token\"",
                "[budgets]",
                "install_daily_credits = " + dailyCredits,
                "[shutdown]",
                "readiness_grace_seconds = 0",
                "drain_seconds = 0",
                ""));
        String provider = (String) config.get("provider_url");
        String keyName = (String) config.get("provider_key_name");
        String auth = "auth = { type = \"header\", name = \"Authorization\", format = \"Bearer {key}\" }";
        Files.writeString(directory.resolve("providers.toml"), String.join("\n",
                "[fixture]",
                "base_url = \"" + provider + "\"",
                "allow_http_loopback = true",
                "secret = \"" + keyName + "\"",
                auth,
                "allow = [ { method = \"GET\", path = \"/v1/echo\" }, { method = \"GET\", path = \"/v1/provider-401\" }, { method = \"POST\", path = \"/v1/stream\" } ]",
                "[costly]",
                "base_url = \"" + provider + "\"",
                "allow_http_loopback = true",
                "secret = \"" + keyName + "\"",
                auth,
                "allow = [ { method = \"GET\", path = \"/v1/echo\", cost = " + costlyCost + " } ]",
                ""));
        environment = Map.of(
                "KEYWARD_SESSION_KEY_FILE", directory.resolve("session.pem").toString(),
                "KEYWARD_GOOGLE_SERVICE_ACCOUNT_FILE", (String) config.get("service_account_file"),
                "KEYWARD_APP_KEYS", "android-fixture=" + appKey,
                keyName, (String) config.get("provider_key"));
        run("keys", "generate", "--out", directory.resolve("session.pem").toString());

        ProcessBuilder builder = new ProcessBuilder(binary, "serve", "--config", directory.resolve("keyward.toml").toString())
                .redirectErrorStream(true).redirectOutput(directory.resolve("serve.log").toFile());
        builder.environment().putAll(environment);
        serve = builder.start();
        baseUrl = "http://127.0.0.1:" + proxyPort;
        awaitReady();
    }

    /** Runs {@code keyward <arguments>} with serve's environment; fails unless it exits 0 within 30 s. */
    String run(String... arguments) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(binary);
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException("keyward " + String.join(" ", arguments) + " failed: " + new String(output, StandardCharsets.UTF_8));
        }
        return new String(output, StandardCharsets.UTF_8);
    }

    /** Waits for {@code /readyz} to answer 200 (the store migrated, the listeners up), 30 s at most. */
    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            if (!serve.isAlive()) throw new IOException("keyward serve exited: " + Files.readString(directory.resolve("serve.log")));
            try {
                HttpURLConnection connection = (HttpURLConnection) new URL(baseUrl + "/readyz").openConnection();
                connection.setConnectTimeout(1000);
                connection.setReadTimeout(1000);
                if (connection.getResponseCode() == 200) return;
            } catch (IOException notYet) {
                // the listener is not up yet
            }
            if (System.nanoTime() > deadline) throw new IOException("keyward serve did not become ready in 30 s");
            // Polling the listener, which announces itself no other way; bounded by the deadline above.
            serve.waitFor(50, TimeUnit.MILLISECONDS);
        }
    }

    /** SIGTERM to serve (no grace, no drain configured), stdin's end to the fakes; removes the folder. */
    void stop() throws Exception {
        serve.destroy();
        if (!serve.waitFor(20, TimeUnit.SECONDS)) serve.destroyForcibly();
        fakes.getOutputStream().close();
        if (!fakes.waitFor(10, TimeUnit.SECONDS)) fakes.destroy();
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
