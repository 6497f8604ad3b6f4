package dev.kdp.it;

import java.io.PrintStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

import org.apache.kafka.common.TopicPartition;

/**
 * What the scenario programs (Scenario, LagScenario) share: "<command> --key value ..." arguments,
 * one hard wall-clock bound for the whole command (--timeout-seconds, default 90; a watchdog halts
 * the JVM past it even inside a blocking client call), and the exit codes the Rust tests read:
 * 0 done, 1 failed or timed out, 2 usage. The JVM always halts at the end: lingering client
 * threads (Streams, share consumers) must not keep it alive.
 */
abstract class Subcommand {
    static final PrintStream OUT = System.out;

    /** The watchdog's bound; a command may move it (a hold, a long run bounded per producer). */
    static volatile long hardDeadlineNanos = Long.MAX_VALUE;

    final Map<String, String> opts;
    final String bootstrap;
    final long deadlineNanos;

    Subcommand(Map<String, String> opts) {
        this.opts = opts;
        this.bootstrap = req("bootstrap");
        long timeoutSeconds = Long.parseLong(opts.getOrDefault("timeout-seconds", "90"));
        this.deadlineNanos = System.nanoTime() + Duration.ofSeconds(timeoutSeconds).toNanos();
        hardDeadlineNanos = deadlineNanos + Duration.ofSeconds(2).toNanos();
    }

    /** Runs one command; an unknown one is a {@link UsageException}. */
    abstract void run(String cmd) throws Exception;

    /** Parses args, runs the command under the watchdog and halts with its exit code. */
    static void main(String program, String[] args, Runnable usage, Function<Map<String, String>, Subcommand> make) {
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            usage.run();
            Runtime.getRuntime().halt(args.length == 0 ? 2 : 0);
        }
        String cmd = args[0];
        Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) {
                System.err.println("bad argument: " + a);
                usage.run();
                Runtime.getRuntime().halt(2);
            }
            opts.put(a.substring(2), args[++i]);
        }
        int rc;
        try {
            Subcommand s = make.apply(opts);
            startWatchdog(program + " " + cmd);
            s.run(cmd);
            rc = 0;
        } catch (UsageException e) {
            System.err.println("usage error: " + e.getMessage());
            usage.run();
            rc = 2;
        } catch (Throwable t) {
            System.err.println(program + " " + cmd + " failed: " + t);
            t.printStackTrace(System.err);
            rc = 1;
        }
        OUT.flush();
        System.err.flush();
        Runtime.getRuntime().halt(rc);
    }

    private static void startWatchdog(String what) {
        Thread t = new Thread(() -> {
            while (System.nanoTime() < hardDeadlineNanos) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
            System.err.println(what + " failed: timed out (--timeout-seconds)");
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }, "kdp-it-watchdog");
        t.setDaemon(true);
        t.start();
    }

    void sleepOrFail(long ms, String what, Throwable last) throws Exception {
        if (System.nanoTime() + ms * 1_000_000L > deadlineNanos) {
            throw new IllegalStateException("timed out: " + what + (last == null ? "" : " (last: " + last + ")"), last);
        }
        if (ms > 0) Thread.sleep(ms);
    }

    TopicPartition tp() {
        return new TopicPartition(req("topic"), reqInt("partition"));
    }

    String req(String k) {
        String v = opts.get(k);
        if (v == null) throw new UsageException("missing --" + k);
        return v;
    }

    int optInt(String k, int dflt) {
        return opts.containsKey(k) ? reqInt(k) : dflt;
    }

    int reqInt(String k) {
        try {
            return Integer.parseInt(req(k));
        } catch (NumberFormatException e) {
            throw new UsageException("--" + k + " must be an integer");
        }
    }

    static void emit(Scenario.Json j) {
        OUT.println(j.toString());
        OUT.flush();
    }

    static final class UsageException extends RuntimeException {
        UsageException(String m) { super(m); }
    }
}
