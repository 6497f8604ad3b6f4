package dev.kdp.it;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Scenarios for the lag tests (issue 30): logs that hold markers, aborted transactions, an open
 * transaction of a killed producer, many small transactions and compaction; committed offsets of
 * groups of either protocol at chosen positions; what a real KafkaConsumer seeked to an offset
 * receives; and Kafka's own tools as the oracle.
 *
 * <p>Usage: {@code java -cp "$KDP_IT_CLASSPATH" dev.kdp.it.LagScenario <command> --bootstrap HOST:PORT[,..] [args]}.
 * stdout: JSON lines (one, except: {@code tool} one per table row, {@code count} one per offset,
 * {@code commit --hold-file} a second once released);
 * logs and errors: stderr; exit 0 on success, 1 on failure, 2 on bad usage. Share groups and
 * Streams groups live in {@link LagGroups} (Kafka 4.x only). See it/README.md, section "Lag".
 */
public final class LagScenario extends Subcommand {

    LagScenario(Map<String, String> opts) {
        super(opts);
    }

    public static void main(String[] args) {
        Subcommand.main("LagScenario", args, LagScenario::usage, LagScenario::new);
    }

    @Override
    void run(String cmd) throws Exception {
        switch (cmd) {
            case "create-topic": createTopic(); break;
            case "write": write(); break;
            case "compacted": compacted(); break;
            case "commit": commit(); break;
            case "delete-records": deleteRecords(); break;
            case "count": count(); break;
            case "state": state(); break;
            case "tool": tool(); break;
            case "share-consume":
            case "share-offsets":
            case "group-config":
            case "streams-run":
            case "list-groups":
                fourX(cmd);
                break;
            default: throw new UsageException("unknown command: " + cmd);
        }
    }

    private static void usage() {
        System.err.println(String.join("\n",
            "usage: LagScenario <command> --bootstrap HOST:PORT[,...] [--timeout-seconds S (default 90, hard bound)] [args]",
            "  create-topic   --topic T [--partitions N (1)] [--replication-factor R (3)] [--config k=v,k=v]",
            "  write          --topic T --partition P --plan STEP,STEP,... --transactional-id PREFIX",
            "                 [--compression none|gzip|snappy|lz4|zstd]; STEP is one of",
            "                   idem:N        one batch of N records from an idempotent producer",
            "                   commit:N      one transaction of N records, committed",
            "                   abort:N       one transaction of N records, aborted",
            "                   txns:K:N:A[:W] K transactions of N records each, every A-th aborted (A=0: none),",
            "                                 from W producers in parallel (default 8)",
            "                   interleave:N  producers X and Y write N one-record batches each, alternately;",
            "                                 then X commits and Y aborts",
            "                   open:N        a separate JVM (Scenario txn-open) opens a transaction of N",
            "                                 records and halts: a producer killed inside its transaction",
            "  compacted      --topic T --transactional-id PREFIX [--keys K (5)] [--rounds R (3)]:",
            "                 creates T (cleanup.policy=compact, 1 partition), writes R rounds of K keys,",
            "                 a committed and an aborted transaction, rolls the segment and waits until the",
            "                 cleaner has compacted (sets the cluster-wide log.cleaner.backoff.ms to 500)",
            "  commit         --group G --topic T --offsets P:O[,P:O...] [--via admin|classic|consumer]",
            "                 [--hold-file PATH]: admin: Admin.alterConsumerGroupOffsets (no member);",
            "                 classic/consumer: a member of that group.protocol commits exactly O (commitSync,",
            "                 reading nothing) and leaves, or with --hold-file stays (paused) until PATH exists",
            "  delete-records --topic T --partition P --before O: Admin.deleteRecords (log start offset := O)",
            "  count          --topic T --partition P --from C[,C2...] [--isolation read_committed|read_uncommitted]",
            "                 [--reset none|earliest|latest (none)] [--list-offsets true]: a KafkaConsumer",
            "                 assigned to T-P and seeked to C polls until its position reaches the end its",
            "                 isolation allows (endOffsets at start: the LSO, or the high watermark); one line",
            "                 per C",
            "  state          --topic T --partition P [--groups G1,G2]: log start, high watermark, LSO, the",
            "                 open transactions on P (DescribeProducers) and each group's committed offset",
            "  tool           --kind consumer-groups|share-groups|streams-groups --group G[,G2...]:",
            "                 runs Kafka's own tool (--describe [--offsets]) and prints one JSON line per row",
            "  share-consume  --group G --topic T --accept N [--isolation read_committed|read_uncommitted]",
            "                 (4.x) sets the group's share.isolation.level and share.auto.offset.reset=earliest,",
            "                 a KafkaShareConsumer accepts the first N records it gets, releases the rest",
            "  share-offsets  --group G: Admin.listShareGroupOffsets (DescribeShareGroupOffsets)",
            "  group-config   --group G [--set k=v,k=v]: IncrementalAlterConfigs/DescribeConfigs on GROUP",
            "  streams-run    --application-id A --topic T [--guarantee at_least_once|exactly_once_v2]:",
            "                 (4.4) a one-thread Streams app, group.protocol=streams, reads T to its end",
            "  list-groups    Admin.listGroups: every group with its type and protocol",
            "stdout: one JSON line (tool: one per row; count: one per C; commit --hold-file: two); logs: stderr"));
    }

    /** The commands of LagGroups, compiled only against Kafka 4.x clients: reached by name. */
    private void fourX(String cmd) throws Exception {
        Class<?> c;
        try {
            c = Class.forName("dev.kdp.it.LagGroups");
        } catch (ClassNotFoundException e) {
            throw new UsageException(cmd + " needs a Kafka 4.x classpath (share and Streams groups)");
        }
        try {
            c.getDeclaredMethod("run", LagScenario.class, String.class).invoke(null, this, cmd);
        } catch (java.lang.reflect.InvocationTargetException e) {
            if (e.getCause() instanceof Exception) throw (Exception) e.getCause();
            throw e;
        }
    }

    // ------------------------------------------------------------------ topics

    private void createTopic() throws Exception {
        String topic = req("topic");
        int partitions = optInt("partitions", 1);
        short rf = (short) optInt("replication-factor", 3);
        Map<String, String> configs = kvList(opts.getOrDefault("config", ""));
        try (Admin admin = admin()) {
            createAndWait(admin, topic, partitions, rf, configs);
            emit(new Scenario.Json().put("topic", topic).put("partitions", partitions).put("config", configs));
        }
    }

    void createAndWait(Admin admin, String topic, int partitions, short rf, Map<String, String> configs)
            throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, rf).configs(configs))).all().get();
        Throwable last = null;
        while (true) {
            try {
                TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                boolean ok = td.partitions().size() == partitions;
                for (TopicPartitionInfo p : td.partitions()) {
                    ok &= p.leader() != null && p.leader().id() >= 0 && p.isr().size() == rf;
                }
                if (ok) {
                    // every leader answers ListOffsets for the partition
                    for (TopicPartitionInfo p : td.partitions()) {
                        listOffset(admin, new TopicPartition(topic, p.partition()), OffsetSpec.latest(),
                            IsolationLevel.READ_UNCOMMITTED);
                    }
                    return;
                }
                last = new IllegalStateException("not ready: " + td);
            } catch (ExecutionException e) {
                last = e.getCause();
            }
            sleepOrFail(100, "topic " + topic, last);
        }
    }

    // ------------------------------------------------------------------ write

    /** What the plan wrote, and what a read_committed consumer reading all of it gets. */
    private static final class Tally {
        long data; // data records written
        long delivered; // of those, what read_committed delivers (committed or non-transactional)
        long aborted; // records of aborted transactions
        long open; // records of open transactions (held back above the LSO, or forever)
        long markers; // control records
    }

    private void write() throws Exception {
        TopicPartition tp = tp();
        String prefix = req("transactional-id");
        String codec = opts.getOrDefault("compression", "none");
        List<String> steps = List.of(req("plan").split(","));
        List<Object> out = new ArrayList<>();
        Tally tally = new Tally();
        long start = System.nanoTime();
        try (Admin admin = admin();
             Producers producers = new Producers(codec, prefix)) {
            long next = hwm(admin, tp);
            long first = next;
            int opened = 0;
            for (String step : steps) {
                String[] f = step.trim().split(":");
                String kind = f[0];
                Scenario.Json j = new Scenario.Json().put("step", step.trim());
                switch (kind) {
                    case "idem": {
                        int n = intArg(f, 1, step);
                        long[] o = send(producers.idempotent(), tp, n, "idem");
                        tally.data += n;
                        tally.delivered += n;
                        next = o[1] + 1;
                        j.put("firstOffset", o[0]).put("lastOffset", o[1]);
                        break;
                    }
                    case "commit":
                    case "abort": {
                        int n = intArg(f, 1, step);
                        KafkaProducer<byte[], byte[]> p = producers.txn("t");
                        p.beginTransaction();
                        long[] o = send(p, tp, n, kind);
                        if (kind.equals("commit")) p.commitTransaction(); else p.abortTransaction();
                        next = o[1] + 2;
                        waitHwm(admin, tp, next);
                        tally.data += n;
                        tally.markers += 1;
                        if (kind.equals("commit")) tally.delivered += n; else tally.aborted += n;
                        j.put("firstOffset", o[0]).put("lastOffset", o[1]).put("markerOffset", o[1] + 1);
                        break;
                    }
                    case "txns": {
                        int k = intArg(f, 1, step);
                        int n = intArg(f, 2, step);
                        int every = intArg(f, 3, step);
                        int parallel = f.length > 4 ? intArg(f, 4, step) : 8;
                        long[] aborts = new long[1];
                        runTxns(producers, tp, k, n, every, parallel, aborts);
                        // every transaction is its n records and one marker, whatever the interleaving
                        long firstOffset = next;
                        next = firstOffset + (long) k * (n + 1);
                        waitHwm(admin, tp, next);
                        tally.data += (long) k * n;
                        tally.markers += k;
                        tally.aborted += aborts[0] * n;
                        tally.delivered += (k - aborts[0]) * n;
                        j.put("firstOffset", firstOffset).put("lastOffset", next - 1)
                            .put("transactions", k).put("aborted", aborts[0]).put("producers", parallel);
                        break;
                    }
                    case "interleave": {
                        int n = intArg(f, 1, step);
                        KafkaProducer<byte[], byte[]> x = producers.txn("x");
                        KafkaProducer<byte[], byte[]> y = producers.txn("y");
                        x.beginTransaction();
                        y.beginTransaction();
                        List<Long> xs = new ArrayList<>();
                        List<Long> ys = new ArrayList<>();
                        for (int i = 0; i < n; i++) {
                            xs.add(send(x, tp, 1, "x-" + i)[0]);
                            ys.add(send(y, tp, 1, "y-" + i)[0]);
                        }
                        x.commitTransaction();
                        long xMarker = ys.get(n - 1) + 1;
                        waitHwm(admin, tp, xMarker + 1);
                        y.abortTransaction();
                        next = xMarker + 2;
                        waitHwm(admin, tp, next);
                        tally.data += 2L * n;
                        tally.markers += 2;
                        tally.delivered += n;
                        tally.aborted += n;
                        j.put("firstOffset", xs.get(0)).put("lastOffset", next - 1)
                            .put("committedOffsets", xs).put("abortedOffsets", ys)
                            .put("commitMarkerOffset", xMarker).put("abortMarkerOffset", xMarker + 1);
                        break;
                    }
                    case "open": {
                        int n = intArg(f, 1, step);
                        String tid = prefix + "-open-" + (opened++);
                        Map<String, Long> line = openInChildJvm(tp, n, tid);
                        next += n;
                        tally.data += n;
                        tally.open += n;
                        j.put("firstOffset", line.get("baseOffset")).put("lastOffset", line.get("lastOffset"))
                            .put("transactionalId", tid).put("producerId", line.get("producerId"))
                            .put("producerEpoch", line.get("producerEpoch"));
                        break;
                    }
                    default:
                        throw new UsageException("unknown plan step: " + step);
                }
                j.put("kind", kind);
                out.add(j);
            }
            long hw = waitHwm(admin, tp, next);
            emit(new Scenario.Json()
                .put("scenario", "write").put("topic", tp.topic()).put("partition", tp.partition())
                .put("compression", codec)
                .put("firstOffset", first)
                .put("steps", out)
                .put("dataRecords", tally.data)
                .put("deliveredReadCommitted", tally.delivered)
                .put("abortedRecords", tally.aborted)
                .put("openRecords", tally.open)
                .put("markers", tally.markers)
                .put("logStartOffset", listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED))
                .put("highWatermark", hw)
                .put("lastStableOffset", listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED))
                .put("millis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        }
    }

    /**
     * K transactions of n records, transaction i (1-based) aborted when every > 0 and i % every
     * == 0, spread over `parallel` transactional producers (PREFIX-p0, p1, ...) in threads: one
     * producer manages about 20 transactions a second here (EndTxn, then the next transaction
     * waits for the markers), so thousands need several.
     */
    private void runTxns(Producers producers, TopicPartition tp, int k, int n, int every, int parallel, long[] aborts)
            throws Exception {
        List<KafkaProducer<byte[], byte[]>> ps = new ArrayList<>();
        for (int w = 0; w < parallel; w++) ps.add(producers.txn("p" + w));
        java.util.concurrent.atomic.AtomicLong aborted = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(parallel);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < parallel; w++) {
                final int worker = w;
                done.add(pool.submit(() -> {
                    KafkaProducer<byte[], byte[]> p = ps.get(worker);
                    for (int i = worker + 1; i <= k; i += parallel) {
                        p.beginTransaction();
                        for (int r = 0; r < n; r++) {
                            p.send(new ProducerRecord<>(tp.topic(), tp.partition(),
                                ("k-" + r).getBytes(StandardCharsets.UTF_8),
                                ("txns-" + i + "-" + r).getBytes(StandardCharsets.UTF_8)));
                        }
                        if (every > 0 && i % every == 0) {
                            p.flush(); // an abort drops unsent records: make sure they are written first
                            p.abortTransaction();
                            aborted.incrementAndGet();
                        } else {
                            p.commitTransaction();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> d : done) d.get();
        } finally {
            pool.shutdown();
        }
        aborts[0] = aborted.get();
    }

    /** The producers of one plan: one idempotent, and transactional ones by role (PREFIX-role). */
    private final class Producers implements AutoCloseable {
        private final String codec;
        private final String prefix;
        private KafkaProducer<byte[], byte[]> idem;
        private final Map<String, KafkaProducer<byte[], byte[]>> txn = new LinkedHashMap<>();

        Producers(String codec, String prefix) {
            this.codec = codec;
            this.prefix = prefix;
        }

        KafkaProducer<byte[], byte[]> idempotent() {
            if (idem == null) idem = new KafkaProducer<>(producerProps(codec, null));
            return idem;
        }

        KafkaProducer<byte[], byte[]> txn(String role) {
            return txn.computeIfAbsent(role, r -> {
                KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(producerProps(codec, prefix + "-" + r));
                p.initTransactions();
                return p;
            });
        }

        @Override
        public void close() {
            if (idem != null) idem.close(Duration.ofSeconds(10));
            for (KafkaProducer<byte[], byte[]> p : txn.values()) p.close(Duration.ofSeconds(10));
        }
    }

    /**
     * Scenario txn-open in a JVM of its own, which halts inside its transaction: the transaction
     * stays Ongoing for its timeout (one hour), as a producer killed with kill -9 leaves it.
     */
    private Map<String, Long> openInChildJvm(TopicPartition tp, int n, String tid) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            "dev.kdp.it.Scenario", "txn-open", "--bootstrap", bootstrap,
            "--topic", tp.topic(), "--partition", String.valueOf(tp.partition()),
            "--records", String.valueOf(n), "--transactional-id", tid, "--timeout-seconds", "60"));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            line = r.readLine();
        }
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("Scenario txn-open did not halt");
        }
        if (p.exitValue() != 0 || line == null) {
            throw new IllegalStateException("Scenario txn-open exited " + p.exitValue() + " printing " + line);
        }
        // the line is Scenario.Json's: a flat "key":number for each of these
        Map<String, Long> j = new HashMap<>();
        for (String k : List.of("baseOffset", "lastOffset", "producerId", "producerEpoch")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + k + "\":(-?[0-9]+)").matcher(line);
            if (!m.find()) throw new IllegalStateException("Scenario txn-open printed no " + k + ": " + line);
            j.put(k, Long.parseLong(m.group(1)));
        }
        return j;
    }

    // ------------------------------------------------------------------ compacted

    /**
     * A compacted partition: R rounds of the same K keys (idempotent, one batch a round), a
     * committed transaction (keys c-0, c-1) and an aborted one (keys a-0, a-1); a pause past
     * segment.ms and one more record roll the segment, and the cleaner compacts the rest.
     * Done when a read_uncommitted scan of [0, end of the cleaned part) returns K + 2 + 2 records
     * (the cleaner drops superseded values and aborted records; batches keep their offsets).
     */
    private void compacted() throws Exception {
        String topic = req("topic");
        String prefix = req("transactional-id");
        int keys = optInt("keys", 5);
        int rounds = optInt("rounds", 3);
        TopicPartition tp = new TopicPartition(topic, 0);
        long start = System.nanoTime();
        try (Admin admin = admin()) {
            // the cleaner's pause between runs (default 15 s) is a dynamic broker config
            admin.incrementalAlterConfigs(Map.of(
                new org.apache.kafka.common.config.ConfigResource(
                    org.apache.kafka.common.config.ConfigResource.Type.BROKER, ""),
                List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("log.cleaner.backoff.ms", "500"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get();
            createAndWait(admin, topic, 1, (short) 3, Map.of(
                "cleanup.policy", "compact",
                "segment.ms", "1000",
                "min.cleanable.dirty.ratio", "0.01",
                "delete.retention.ms", "3600000",
                "min.compaction.lag.ms", "0"));
            long written = 0;
            try (KafkaProducer<byte[], byte[]> idem = new KafkaProducer<>(producerProps("none", null));
                 KafkaProducer<byte[], byte[]> txn = new KafkaProducer<>(producerProps("none", prefix))) {
                for (int r = 0; r < rounds; r++) {
                    List<Future<RecordMetadata>> fs = new ArrayList<>();
                    for (int k = 0; k < keys; k++) {
                        fs.add(idem.send(new ProducerRecord<>(topic, 0, ("key-" + k).getBytes(StandardCharsets.UTF_8),
                            ("round-" + r).getBytes(StandardCharsets.UTF_8))));
                    }
                    idem.flush();
                    for (Future<RecordMetadata> f : fs) f.get();
                    written += keys;
                }
                txn.initTransactions();
                txn.beginTransaction();
                send(txn, tp, 2, "c", "c-");
                txn.commitTransaction();
                waitHwm(admin, tp, written + 3);
                txn.beginTransaction();
                send(txn, tp, 2, "a", "a-");
                txn.abortTransaction();
                long cleanedEnd = waitHwm(admin, tp, written + 6);
                // roll: the active segment is never cleaned
                Thread.sleep(1200);
                send(idem, tp, 1, "roll", "roll-");
                long hw = waitHwm(admin, tp, cleanedEnd + 1);
                // read_uncommitted delivers data records (aborted ones too, while they exist), never
                // markers: before cleaning rounds*keys + 4; after, one value per key, the committed
                // pair, and no aborted record (the cleaner drops them)
                int cleaned = keys + 2;
                int seen;
                while (true) {
                    seen = countRecords(tp, 0, cleanedEnd, "read_uncommitted", "earliest", false).records;
                    if (seen == cleaned) break;
                    sleepOrFail(500, "compaction of " + topic + " (" + seen + " records in [0, " + cleanedEnd
                        + "), want " + cleaned + ")", null);
                }
                emit(new Scenario.Json()
                    .put("scenario", "compacted").put("topic", topic).put("partition", 0)
                    .put("keys", keys).put("rounds", rounds)
                    .put("cleanedEnd", cleanedEnd)
                    .put("recordsBelowCleanedEnd", seen)
                    .put("rollOffset", cleanedEnd)
                    .put("logStartOffset", listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED))
                    .put("highWatermark", hw)
                    .put("lastStableOffset", listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED))
                    .put("millis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
            }
        }
    }

    // ------------------------------------------------------------------ commit

    private void commit() throws Exception {
        String group = req("group");
        String topic = req("topic");
        String via = opts.getOrDefault("via", "admin");
        Map<TopicPartition, OffsetAndMetadata> offsets = new TreeMap<>(
            java.util.Comparator.comparingInt(TopicPartition::partition));
        for (String po : req("offsets").split(",")) {
            String[] f = po.split(":");
            if (f.length != 2) throw new UsageException("--offsets: want P:O, got " + po);
            offsets.put(new TopicPartition(topic, Integer.parseInt(f[0])), new OffsetAndMetadata(Long.parseLong(f[1])));
        }
        String hold = opts.get("hold-file");
        Scenario.Json j = new Scenario.Json().put("scenario", "commit").put("group", group).put("topic", topic).put("via", via);
        if (via.equals("admin")) {
            if (hold != null) throw new UsageException("--hold-file needs --via classic|consumer");
            try (Admin admin = admin()) {
                admin.alterConsumerGroupOffsets(group, offsets).all().get();
                emit(j.put("committed", readBack(admin, group, offsets)));
            }
            return;
        }
        if (!via.equals("classic") && !via.equals("consumer")) throw new UsageException("--via admin|classic|consumer");
        // "latest": the member's position is never used (paused), but a poll initializes it
        Properties p = consumerProps("read_committed", "latest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put("group.protocol", via);
        try (Admin admin = admin(); KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            c.subscribe(List.of(topic));
            // the one member gets every partition; it reads nothing (paused as soon as assigned)
            while (c.assignment().size() < partitions) {
                c.poll(Duration.ofMillis(100));
                c.pause(c.assignment());
                sleepOrFail(0, "assignment of " + topic + " in " + group, null);
            }
            c.pause(c.assignment());
            c.commitSync(offsets, Duration.ofSeconds(30));
            j.put("memberId", c.groupMetadata().memberId())
                .put("generationId", c.groupMetadata().generationId())
                .put("committed", readBack(admin, group, offsets));
            if (hold == null) {
                emit(j);
                return;
            }
            emit(j.put("holding", true));
            Path resume = Path.of(hold);
            while (!Files.exists(resume)) {
                c.poll(Duration.ofMillis(100)); // paused: stays a member, fetches nothing
                sleepOrFail(0, "hold file never appeared: " + resume, null);
            }
            emit(new Scenario.Json().put("scenario", "commit-released").put("group", group));
        }
    }

    /** The group's committed offsets of those partitions, as Admin.listConsumerGroupOffsets reads them. */
    private Map<String, Object> readBack(Admin admin, String group, Map<TopicPartition, OffsetAndMetadata> want)
            throws Exception {
        Map<TopicPartition, OffsetAndMetadata> got = admin.listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata().get();
        Map<String, Object> out = new TreeMap<>();
        for (TopicPartition tp : want.keySet()) {
            OffsetAndMetadata o = got.get(tp);
            if (o == null || o.offset() != want.get(tp).offset()) {
                throw new IllegalStateException(group + " " + tp + ": committed " + o + ", want " + want.get(tp));
            }
            out.put(String.valueOf(tp.partition()), o.offset());
        }
        return out;
    }

    private void deleteRecords() throws Exception {
        TopicPartition tp = tp();
        long before = Long.parseLong(req("before"));
        try (Admin admin = admin()) {
            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before)))
                .lowWatermarks().get(tp).get().lowWatermark();
            emit(new Scenario.Json().put("scenario", "delete-records").put("topic", tp.topic())
                .put("partition", tp.partition()).put("lowWatermark", low)
                .put("logStartOffset", listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED)));
        }
    }

    // ------------------------------------------------------------------ count

    /** What one KafkaConsumer read. */
    static final class Counted {
        int records;
        long firstOffset = -1;
        long lastOffset = -1;
        long position;
        long endOffset;
        int polls;
        String outOfRange; // the exception's simple name when the fetch position was out of range
        final List<Long> offsets = new ArrayList<>();
    }

    /** One line per --from value (comma-separated), each from a fresh consumer. */
    private void count() throws Exception {
        TopicPartition tp = tp();
        String isolation = opts.getOrDefault("isolation", "read_committed");
        String reset = opts.getOrDefault("reset", "none");
        boolean list = Boolean.parseBoolean(opts.getOrDefault("list-offsets", "false"));
        long logStart;
        long hw;
        long lso;
        try (Admin admin = admin()) {
            logStart = listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            hw = hwm(admin, tp);
            lso = listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
        }
        for (String f : req("from").split(",")) {
            long from = Long.parseLong(f.trim());
            long start = System.nanoTime();
            Counted c = countRecords(tp, from, Long.MAX_VALUE, isolation, reset, list);
            Scenario.Json j = new Scenario.Json()
                .put("scenario", "count").put("topic", tp.topic()).put("partition", tp.partition())
                .put("isolation", isolation).put("reset", reset).put("from", from)
                .put("records", c.records).put("firstOffset", c.firstOffset).put("lastOffset", c.lastOffset)
                .put("position", c.position).put("endOffset", c.endOffset).put("polls", c.polls)
                .put("outOfRange", c.outOfRange)
                .put("logStartOffset", logStart).put("highWatermark", hw).put("lastStableOffset", lso)
                .put("millis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            if (list) j.put("offsets", c.offsets);
            emit(j);
        }
    }

    /**
     * A consumer of that isolation, assigned to tp and seeked to from, polls until its position
     * reaches min(until, the end offset it can reach): endOffsets() taken once at the start (the
     * LSO under read_committed, the high watermark under read_uncommitted; the tests write nothing
     * meanwhile). The position moves past control records and skipped aborted batches as well as
     * delivered records, so the loop ends on what the consumer did, not on a wall-clock guess;
     * --timeout-seconds only bounds a failure. A position out of range with reset=none ends it with
     * outOfRange set.
     */
    Counted countRecords(TopicPartition tp, long from, long until, String isolation, String reset, boolean list)
            throws Exception {
        Counted out = new Counted();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps(isolation, reset))) {
            c.assign(List.of(tp));
            c.seek(tp, from);
            long end = Math.min(until, c.endOffsets(List.of(tp), Duration.ofSeconds(20)).get(tp));
            out.endOffset = end;
            while (true) {
                long pos;
                try {
                    pos = c.position(tp, Duration.ofSeconds(20));
                    if (pos >= end) {
                        out.position = pos;
                        break;
                    }
                    out.polls++;
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                        if (r.offset() >= end) continue; // past `until` (compacted: a bounded scan)
                        out.records++;
                        if (out.firstOffset < 0) out.firstOffset = r.offset();
                        out.lastOffset = r.offset();
                        if (list) out.offsets.add(r.offset());
                    }
                } catch (OffsetOutOfRangeException | NoOffsetForPartitionException e) {
                    out.outOfRange = e.getClass().getSimpleName();
                    out.position = from;
                    break;
                }
                sleepOrFail(0, "consumer of " + tp + " reaching " + end, null);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ state

    private void state() throws Exception {
        TopicPartition tp = tp();
        List<String> groups = opts.containsKey("groups") ? List.of(req("groups").split(",")) : List.of();
        try (Admin admin = admin()) {
            Scenario.Json j = new Scenario.Json().put("scenario", "state").put("topic", tp.topic())
                .put("partition", tp.partition())
                .put("logStartOffset", listOffset(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED))
                .put("highWatermark", listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED))
                .put("lastStableOffset", listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            List<Object> open = new ArrayList<>();
            for (org.apache.kafka.clients.admin.ProducerState s : admin.describeProducers(List.of(tp))
                    .partitionResult(tp).get().activeProducers()) {
                if (s.currentTransactionStartOffset().isPresent()) {
                    open.add(new Scenario.Json().put("producerId", s.producerId())
                        .put("producerEpoch", s.producerEpoch())
                        .put("currentTransactionStartOffset", s.currentTransactionStartOffset().getAsLong()));
                }
            }
            j.put("openTransactions", open);
            Map<String, Object> committed = new TreeMap<>();
            for (String g : groups) {
                OffsetAndMetadata o = admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get().get(tp);
                committed.put(g, o == null ? null : o.offset());
            }
            emit(j.put("committed", committed));
        }
    }

    // ------------------------------------------------------------------ Kafka's tools as the oracle

    /**
     * Runs Kafka's own group tool of this classpath (the cluster's version) in a JVM of its own,
     * exactly as kafka-consumer-groups.sh / kafka-share-groups.sh / kafka-streams-groups.sh would,
     * and prints one JSON line per table row: the header's names as keys (GROUP, TOPIC, PARTITION,
     * CURRENT-OFFSET, LOG-END-OFFSET, LAG, ...), each cell a string as printed ("-" stays "-").
     * The tool's other lines (e.g. "Consumer group 'G' has no active members.") go to stderr.
     */
    private void tool() throws Exception {
        String kind = req("kind");
        String cls;
        List<String> extra = new ArrayList<>();
        switch (kind) {
            case "consumer-groups": cls = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"; break;
            case "share-groups": cls = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"; extra.add("--offsets"); break;
            case "streams-groups": cls = "org.apache.kafka.tools.streams.StreamsGroupCommand"; extra.add("--offsets"); break;
            default: throw new UsageException("--kind consumer-groups|share-groups|streams-groups");
        }
        List<String> cmd = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"), cls,
            "--bootstrap-server", bootstrap, "--describe"));
        cmd.addAll(extra);
        for (String g : req("group").split(",")) {
            cmd.add("--group");
            cmd.add(g);
        }
        File stdout = File.createTempFile("kdp-lag-tool", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(stdout)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
            if (!p.waitFor(left, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(cls + " did not finish");
            }
            List<String> lines = Files.readAllLines(stdout.toPath(), StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(cls + " exited " + p.exitValue() + ": " + String.join("\n", lines));
            }
            for (Scenario.Json row : parseTable(lines)) emit(row);
        } finally {
            Files.deleteIfExists(stdout.toPath());
        }
    }

    /**
     * The tools print, per group, an optional sentence, a blank line, a header line starting
     * with GROUP and rows of cells padded with spaces; no cell holds a space (an absent value is
     * "-"). A line with another number of cells than its header is an error, not a guess.
     */
    static List<Scenario.Json> parseTable(List<String> lines) {
        List<Scenario.Json> rows = new ArrayList<>();
        String[] header = null;
        for (String line : lines) {
            String t = line.trim();
            if (t.isEmpty()) {
                header = null;
                continue;
            }
            String[] cells = t.split("\\s+");
            if (cells[0].equals("GROUP")) {
                header = cells;
            } else if (header == null) {
                System.err.println("tool: " + line);
            } else if (cells.length != header.length) {
                throw new IllegalStateException("row " + line + " does not match header " + String.join(" ", header));
            } else {
                Scenario.Json row = new Scenario.Json();
                for (int i = 0; i < cells.length; i++) row.put(header[i], cells[i]);
                rows.add(row);
            }
        }
        return rows;
    }

    // ------------------------------------------------------------------ shared pieces

    Properties producerProps(String codec, String tid) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // N records sent before flush() form one batch
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10000");
        // the next transaction of a producer retries (CONCURRENT_TRANSACTIONS) until the last one's markers are in
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "20");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(1 << 20));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        if (tid != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, tid);
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(Scenario.TXN_TIMEOUT_MS));
        }
        return p;
    }

    Properties consumerProps(String isolation, String reset) {
        if (!isolation.equals("read_committed") && !isolation.equals("read_uncommitted")) {
            throw new UsageException("--isolation read_committed|read_uncommitted");
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset);
        return p;
    }

    Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        return Admin.create(p);
    }

    static long listOffset(Admin admin, TopicPartition tp, OffsetSpec spec, IsolationLevel isolation) throws Exception {
        return admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(isolation)).partitionResult(tp).get().offset();
    }

    static long hwm(Admin admin, TopicPartition tp) throws Exception {
        return listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
    }

    /** Waits until the high watermark is `want` (the marker of a finished transaction is in); fails past it. */
    long waitHwm(Admin admin, TopicPartition tp, long want) throws Exception {
        while (true) {
            long hw = hwm(admin, tp);
            if (hw == want) return hw;
            if (hw > want) throw new IllegalStateException(tp + ": high watermark " + hw + " past the expected " + want);
            sleepOrFail(50, tp + " high watermark " + hw + ", want " + want, null);
        }
    }

    static long[] send(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, int n, String tag) throws Exception {
        return send(producer, tp, n, tag, "k-");
    }

    /** n records (key KEYPREFIX+i, value TAG-i) to exactly tp, flushed as one batch; {firstOffset, lastOffset}. */
    static long[] send(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, int n, String tag, String keyPrefix)
            throws Exception {
        List<Future<RecordMetadata>> fs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            fs.add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(),
                (keyPrefix + i).getBytes(StandardCharsets.UTF_8), (tag + "-" + i).getBytes(StandardCharsets.UTF_8))));
        }
        producer.flush();
        for (Future<RecordMetadata> f : fs) f.get();
        return new long[] {fs.get(0).get().offset(), fs.get(n - 1).get().offset()};
    }

    private static int intArg(String[] f, int i, String step) {
        if (f.length <= i) throw new UsageException("plan step " + step + ": missing field " + i);
        try {
            return Integer.parseInt(f[i]);
        } catch (NumberFormatException e) {
            throw new UsageException("plan step " + step + ": " + f[i] + " is not an integer");
        }
    }

    static Map<String, String> kvList(String s) {
        Map<String, String> m = new LinkedHashMap<>();
        if (s.isBlank()) return m;
        for (String kv : s.split(",")) {
            String[] f = kv.split("=", 2);
            if (f.length != 2) throw new UsageException("want k=v, got " + kv);
            m.put(f[0].trim(), f[1].trim());
        }
        return m;
    }
}
