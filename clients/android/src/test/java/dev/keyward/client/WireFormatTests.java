package dev.keyward.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The library's own encodings: server-sent events, error codes, Retry-After, requests, JSON. */
final class WireFormatTests {
    private static List<ServerSentEvent> parse(String... chunks) {
        ServerSentEventParser parser = new ServerSentEventParser();
        List<ServerSentEvent> events = new ArrayList<>();
        for (String chunk : chunks) {
            byte[] bytes = chunk.getBytes(StandardCharsets.UTF_8);
            events.addAll(parser.feed(bytes, 0, bytes.length));
        }
        return events;
    }

    @Test
    void eventsCompleteAtTheirBlankLineWhateverTheLineEndingsAndChunks() {
        assertEquals(List.of(new ServerSentEvent("message", "a\nb", null, null), new ServerSentEvent("ping", "c", "7", 1500)),
                parse("data: a\r\nda", "ta: b\r\n\r", "\n: comment\revent: ping\rid: 7\rretry: 1500\rdata:c\r\r"));
        assertEquals(List.of(), parse("data: unfinished\n"));
        assertEquals(List.of(), parse("event: only\n\n"), "an event without data is not dispatched");
        assertEquals(List.of(new ServerSentEvent("message", "x", "1", null), new ServerSentEvent("message", "y", "1", null)),
                parse("\uFEFFid: 1\ndata: x\n\ndata: y\n\n"), "the id carries over; a leading BOM is dropped");
        assertEquals(List.of(new ServerSentEvent("message", "", null, null)), parse("data\n\nretry: soon\n"));
    }

    /**
     * The codes of README's answer table ({@code | code (`error` and `Keyward-Error`) | status | when |}),
     * the one list the server's tests hold its own codes to, without the admin API's (rows whose
     * "when" starts with "admin API only": an app never gets them). README's path comes from the
     * system property {@code keyward.readme} (clients/android/test.sh sets it).
     */
    private static List<String> apiTableCodes() throws Exception {
        List<String> lines = Files.readAllLines(Path.of(System.getProperty("keyward.readme")), StandardCharsets.UTF_8);
        int header = -1;
        for (int i = 0; i < lines.size() && header < 0; i++) {
            if (lines.get(i).startsWith("| code (`error` and `Keyward-Error`) | status |")) header = i;
        }
        assertTrue(header >= 0, "README.md: no answer table header");
        List<String> codes = new ArrayList<>();
        for (int i = header + 2; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String[] cells = lines.get(i).split("\\|");
            assertTrue(cells.length >= 4 && cells[1].trim().matches("`[a-z_]+`"), lines.get(i));
            if (!cells[3].trim().startsWith("admin API only")) codes.add(cells[1].trim().replace("`", ""));
        }
        return codes;
    }

    @Test
    void everyCodeOfTheApiTableHasItsConstantAndUnknownOnesAreKept() throws Exception {
        List<String> table = apiTableCodes();
        assertTrue(table.contains("session_invalid") && table.contains("upstream_timeout"), table.toString());
        for (String code : table) assertEquals(code, KeywardErrorCode.fromWire(code).wire());
        assertEquals(table.size() + 1, KeywardErrorCode.values().length);
        KeywardRefusal refusal = new KeywardRefusal("brand_new_code", 418, null, "req-1");
        assertEquals(KeywardErrorCode.OTHER, refusal.code());
        assertEquals("brand_new_code", refusal.wireCode());
    }

    @Test
    void retryAfterIsReadInDelaySecondsOnly() {
        assertEquals(Integer.valueOf(120), KeywardRefusal.parseRetryAfter("120"));
        assertEquals(Integer.valueOf(0), KeywardRefusal.parseRetryAfter("0"));
        assertNull(KeywardRefusal.parseRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT"));
        assertNull(KeywardRefusal.parseRetryAfter("-1"));
        assertNull(KeywardRefusal.parseRetryAfter(""));
        assertNull(KeywardRefusal.parseRetryAfter(null));
    }

    @Test
    void requestsThatWouldFormAnotherUrlAreRefusedBeforeAnythingIsSent() throws Exception {
        ProviderRequest.get("openai", "/v1/models", "a=1&b=%20").validate();
        String[][] bad = {{"open ai", "/v1"}, {"openai", "v1"}, {"openai", "/v1/a b"}, {"openai", "/v1/#x"}, {"", "/v1"},
            {"openai", "/v1/../models"}, {"openai", "/v1/./models"}, {"openai", "/v1/.."}};
        ProviderRequest.get("openai", "/v1/file.v2/...x", null).validate();
        for (String[] parts : bad) {
            KeywardException thrown = assertThrows(KeywardException.class, () -> ProviderRequest.get(parts[0], parts[1], null).validate());
            assertEquals(KeywardException.Kind.INVALID_REQUEST, thrown.kind());
        }
        assertThrows(KeywardException.class, () -> ProviderRequest.get("openai", "/v1", "q=a b").validate());
        assertThrows(KeywardException.class, () -> ProviderRequest.builder("openai", "/v1").method("GE T").build().validate());
    }

    @Test
    void jsonReadsNestedValuesAndWritesEscapedStrings() {
        Map<String, Object> object = Json.parseObject("{\"a\":[1,2.5,true,null],\"b\":{\"c\":\"\\u00e9\\n\\\"\"}}");
        assertEquals(List.of(1L, 2.5, true), ((List<?>) object.get("a")).subList(0, 3));
        assertEquals("\u00e9\n\"", ((Map<?, ?>) object.get("b")).get("c"));
        assertNull(Json.parseObject("{\"a\":1} x"));
        assertNull(Json.parseObject("[1]"));
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("k", "q\"\\\n\u0001");
        assertEquals("{\"k\":\"q\\\"\\\\\\n\\u0001\"}", Json.writeObject(fields));
    }
}
