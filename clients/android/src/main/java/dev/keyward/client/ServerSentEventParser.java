package dev.keyward.client;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Turns a byte stream into events as each blank line completes one; lines may end in LF, CRLF or CR. */
final class ServerSentEventParser {
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final List<String> data = new ArrayList<>();
    private String event = "";
    private String lastId;
    private Integer retry;
    private boolean sawData;
    private boolean pendingCR;
    private boolean firstLine = true;

    /** Feeds {@code count} bytes of {@code chunk} from {@code offset}; returns the events they completed, in order. */
    List<ServerSentEvent> feed(byte[] chunk, int offset, int count) {
        List<ServerSentEvent> events = new ArrayList<>();
        for (int i = offset; i < offset + count; i++) {
            byte b = chunk[i];
            if (pendingCR) {
                pendingCR = false;
                if (b == '\n') continue; // the LF of a CRLF
            }
            if (b == '\n' || b == '\r') {
                pendingCR = b == '\r';
                ServerSentEvent completed = line(line.toString(StandardCharsets.UTF_8));
                if (completed != null) events.add(completed);
                line.reset();
            } else {
                line.write(b);
            }
        }
        return events;
    }

    private ServerSentEvent line(String text) {
        if (firstLine) {
            firstLine = false;
            if (text.startsWith("\uFEFF")) text = text.substring(1);
        }
        if (text.isEmpty()) return dispatch();
        if (text.startsWith(":")) return null;
        String name;
        String value;
        int colon = text.indexOf(':');
        if (colon >= 0) {
            name = text.substring(0, colon);
            value = text.substring(colon + 1);
            if (value.startsWith(" ")) value = value.substring(1);
        } else {
            name = text;
            value = "";
        }
        switch (name) {
            case "data":
                data.add(value);
                sawData = true;
                break;
            case "event":
                event = value;
                break;
            case "id":
                if (value.indexOf('\0') < 0) lastId = value;
                break;
            case "retry":
                if (!value.isEmpty() && value.chars().allMatch(c -> c >= '0' && c <= '9') && value.length() <= 9) retry = Integer.valueOf(value);
                break;
            default:
                break;
        }
        return null;
    }

    private ServerSentEvent dispatch() {
        ServerSentEvent completed = sawData ? new ServerSentEvent(event.isEmpty() ? "message" : event, String.join("\n", data), lastId, retry) : null;
        data.clear();
        event = "";
        retry = null;
        sawData = false;
        return completed;
    }
}
