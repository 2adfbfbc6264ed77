package dev.keyward.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
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

    @Test
    void everyCodeOfTheApiTableHasItsConstantAndUnknownOnesAreKept() {
        String[] table = {"bad_request", "challenge_invalid", "attestation_invalid", "session_invalid", "key_unknown", "credential_invalid",
            "app_key_invalid", "forbidden", "attestation_required", "body_rule_refused", "not_found", "method_not_allowed", "payload_too_large", "rate_limited",
            "install_budget_exhausted", "app_budget_exhausted", "internal_error", "not_implemented", "upstream_error", "unavailable",
            "upstream_timeout"};
        for (String code : table) assertEquals(code, KeywardErrorCode.fromWire(code).wire());
        assertEquals(table.length + 1, KeywardErrorCode.values().length);
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
