package dev.streamproof.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.a2a.client.Client;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2ACardResolver;
import io.a2a.client.http.JdkA2AHttpClient;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.spec.AgentCard;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * streamproof's Java reference A2A client: the client seed's streaming recipe
 * (docs/explanation/a2a-client-rules.md) on a2a-java 0.3.3.Final. One call per process; the result is one JSON
 * object, the last line on stdout; logs go to stderr. See references/java-client/README.md.
 */
public final class Main {
    private static final String PROG = "streamproof-java-client";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Main() {}

    static void log(String line) {
        System.err.println(PROG + ": " + line);
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        Settings settings;
        try {
            settings = Settings.fromEnv(System.getenv());
        } catch (Settings.ConfigError e) {
            log(e.getMessage());
            System.exit(2);
            return;
        }
        Map<String, Object> result;
        try {
            result = call(settings);
        } catch (Throwable t) { // never a stack trace instead of the result line
            result = error(StreamCall.describe(t));
        }
        try {
            out.println(JSON.writeValueAsString(result));
        } catch (IOException e) {
            out.println("{\"status\":\"error\",\"message\":\"cannot write the result\"}");
        }
        out.flush();
        // At once: the JDK client's threads and any stream still open end with the process (an
        // orderly System.exit takes ~300 ms, during which an open stream still delivers events).
        Runtime.getRuntime().halt(0);
    }

    private static Map<String, Object> call(Settings settings) throws Exception {
        installProxy(System.getenv());
        WarmUp.run();
        long started = System.nanoTime(); // time limits count from the first request
        AgentCard card;
        // The deadline bounds the whole call, the card's fetch included: JdkA2AHttpClient sets
        // no request timeout, so a card request that stalls would otherwise hold the call.
        A2ACardResolver resolver = new A2ACardResolver(new JdkA2AHttpClient(), settings.url());
        CompletableFuture<AgentCard> fetch = CompletableFuture.supplyAsync(() -> {
            try {
                return resolver.getAgentCard();
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        try {
            card = fetch.get((long) (settings.deadlineS() * 1e9), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            fetch.cancel(true);
            return noTask("timeout", String.format(Locale.ROOT,
                    "no agent card within the %ss deadline", settings.deadlineS()));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return error("cannot read the agent card: " + StreamCall.describe(cause));
        }
        log("agent " + card.name() + " streaming=" + card.capabilities().streaming()
                + " protocol=" + card.protocolVersion());
        ClientConfig config = new ClientConfig.Builder()
                .setStreaming(true)
                .setAcceptedOutputModes(List.of("text/plain", "application/json"))
                .build();
        Client client = Client.builder(card)
                .clientConfig(config)
                .withTransport(JSONRPCTransport.class, new JSONRPCTransportConfig())
                .build();
        StreamCall call = new StreamCall(client, settings);
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "streamproof-watchdog");
            t.setDaemon(true);
            return t;
        });
        try {
            try {
                call.start();
            } catch (Exception e) {
                return call.result(failNow(call, "cannot send the message: " + StreamCall.describe(e)));
            }
            if (!settings.bug("no-watchdog")) {
                long every = (long) (Math.max(Math.min(settings.idleS() / 10, 1.0), 0.01) * 1e6);
                watchdog.scheduleAtFixedRate(call::watch, every, every, TimeUnit.MICROSECONDS);
            }
            long remaining = (long) (settings.deadlineS() * 1e9) - (System.nanoTime() - started);
            String status;
            try {
                status = call.done.get(Math.max(remaining, 0), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                watchdog.shutdownNow();
                call.closeStreams();
                call.cancelQuietly();
                call.timedOut(String.format(Locale.ROOT, "no result within the %ss deadline", settings.deadlineS()));
                return call.result("timeout");
            }
            call.closeStreams();
            if ("completed".equals(status) && call.unverified()) {
                call.verify();
            }
            return call.result(status);
        } finally {
            watchdog.shutdownNow();
        }
    }

    private static String failNow(StreamCall call, String reason) {
        call.fail(reason);
        return "error";
    }

    private static Map<String, Object> error(String reason) {
        return noTask("error", reason);
    }

    /** A result for a call that never reached a task: no ids, no artifacts. */
    private static Map<String, Object> noTask(String status, String reason) {
        log("call failed: " + reason);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", status);
        out.put("taskId", null);
        out.put("contextId", null);
        out.put("artifacts", List.of());
        out.put("message", reason);
        out.put("incomplete", false);
        return out;
    }

    /**
     * Honour HTTP_PROXY / NO_PROXY (the capability proxy_env): the JDK's HttpClient uses the
     * default ProxySelector, which reads only Java's own properties and exempts loopback, so
     * the variables are mapped to a selector of our own before the first client is built.
     */
    static void installProxy(Map<String, String> env) {
        String raw = firstSet(env, "HTTP_PROXY", "http_proxy");
        if (raw == null) {
            return;
        }
        URI proxy = URI.create(raw.contains("://") ? raw : "http://" + raw);
        int port = proxy.getPort() > 0 ? proxy.getPort() : 80;
        Proxy http = new Proxy(Proxy.Type.HTTP, InetSocketAddress.createUnresolved(proxy.getHost(), port));
        List<String> exempt = new ArrayList<>();
        String noProxy = firstSet(env, "NO_PROXY", "no_proxy");
        if (noProxy != null) {
            for (String item : noProxy.split(",")) {
                if (!item.isBlank()) {
                    exempt.add(item.strip().toLowerCase(Locale.ROOT));
                }
            }
        }
        log("HTTP proxy " + proxy.getHost() + ":" + port + (exempt.isEmpty() ? "" : " except " + exempt));
        ProxySelector.setDefault(new ProxySelector() {
            @Override
            public List<Proxy> select(URI uri) {
                String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
                boolean skip = !"http".equalsIgnoreCase(uri.getScheme())
                        || exempt.stream().anyMatch(e -> e.equals("*") || host.equals(e)
                                || host.endsWith(e.startsWith(".") ? e : "." + e));
                return List.of(skip ? Proxy.NO_PROXY : http);
            }

            @Override
            public void connectFailed(URI uri, SocketAddress address, IOException e) {
                log("proxy " + address + " failed for " + uri + ": " + e.getMessage());
            }
        });
    }

    private static String firstSet(Map<String, String> env, String... names) {
        for (String name : names) {
            String value = env.get(name);
            if (value != null && !value.isBlank()) {
                return value.strip();
            }
        }
        return null;
    }
}
