package dev.kdp.it;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * What the framework harnesses (StreamsApp, ConnectWorker, FlinkSinkJob, OwnersVectors) share:
 * "--key value" arguments, one JSON object per stdout line (each with an "event" field, flushed at
 * once, so a test can read them while the process runs), logs on stderr. JDK and Scenario.Json
 * only: the Flink build (it/flink-pom.xml) compiles this file with Flink's kafka-clients.
 */
final class Harness {
    private static final PrintStream OUT =
        new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);

    private final String name;
    private final String usage;
    private final Map<String, String> opts = new HashMap<>();

    /** Exit code 2 (usage) when an argument is not "--key value". */
    Harness(String name, String[] args, String usage) {
        this.name = name;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                System.err.println(usage);
                System.exit(0);
            }
            if (!a.startsWith("--") || i + 1 >= args.length) {
                System.err.println(name + ": bad argument: " + a + "\n" + usage);
                System.exit(2);
            }
            opts.put(a.substring(2), args[++i]);
        }
        this.usage = usage;
    }

    String req(String key) {
        String v = opts.get(key);
        if (v == null) {
            System.err.println(name + ": --" + key + " is required\n" + usage);
            System.exit(2);
        }
        return v;
    }

    String opt(String key, String dflt) { return opts.getOrDefault(key, dflt); }

    int intOpt(String key, int dflt) { return opts.containsKey(key) ? Integer.parseInt(opts.get(key)) : dflt; }

    long longOpt(String key, long dflt) { return opts.containsKey(key) ? Long.parseLong(opts.get(key)) : dflt; }

    boolean has(String key) { return opts.containsKey(key); }

    /** Prints one event line: {"event": event, k1: v1, k2: v2, ...} (keys and values alternate). */
    static void emit(String event, Object... kv) {
        Scenario.Json line = new Scenario.Json().put("event", event);
        for (int i = 0; i + 1 < kv.length; i += 2) {
            line.put(String.valueOf(kv[i]), kv[i + 1]);
        }
        synchronized (OUT) {
            OUT.println(line);
        }
    }

    void log(String msg) { System.err.println(name + ": " + msg); }

    /** The kafka-clients version on the classpath (the properties file AppInfoParser reads; that class moved in 4.x). */
    static String kafkaVersion() {
        try (java.io.InputStream in = Harness.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    static long pid() { return ProcessHandle.current().pid(); }

    /** A TCP port free on 127.0.0.1 right now (the caller binds it soon after). */
    static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
