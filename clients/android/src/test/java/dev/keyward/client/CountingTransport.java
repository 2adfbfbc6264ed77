package dev.keyward.client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The default transport, counting requests per path and keeping every request the client sent. */
final class CountingTransport implements HttpTransport {
    private final HttpTransport inner = new HttpUrlConnectionTransport();
    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    final List<Request> sent = Collections.synchronizedList(new ArrayList<>());

    @Override
    public Response execute(Request request) throws IOException {
        String target = request.target();
        int query = target.indexOf('?');
        String path = query < 0 ? target : target.substring(0, query);
        counts.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
        sent.add(request);
        return inner.execute(request);
    }

    /** Requests sent to {@code path} (without query). */
    int count(String path) {
        AtomicInteger count = counts.get(path);
        return count == null ? 0 : count.get();
    }
}
