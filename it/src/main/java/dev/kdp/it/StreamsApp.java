package dev.kdp.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;

/**
 * A real Kafka Streams application with processing.guarantee=exactly_once_v2 that copies every
 * record of --input to --output, for the owners tests: one JVM per instance.
 *
 * <p>Its producers are Kafka's own {@link KafkaProducer}, created through a client supplier that
 * only watches them (Streams builds their configs, so the transactional id is the one Streams
 * chose). With a long --commit-interval-ms (and --transaction-timeout-ms at least as long, which
 * Streams requires), the first record a thread copies opens a transaction that stays open until
 * the next commit: the "open" line says so once the broker has acknowledged that record.
 *
 * <p>stdout, one JSON object per line:
 * <ul>
 *   <li>{"event":"started","pid","kafkaVersion","applicationId","groupProtocol","threads","stateDir"}
 *   <li>{"event":"producer","clientId","transactionalId"}: a thread producer was created
 *   <li>{"event":"running","processId","threads":[{"threadName","consumerClientId","producerClientIds","activeTasks":[{"taskId","partitions"}]}]}:
 *       each time the instance (re)enters RUNNING, i.e. after every rebalance
 *   <li>{"event":"open","transactionalId","clientId","topic","partition","offset"}: the first record
 *       of a transaction is in the log (the transaction is Ongoing on the coordinator)
 *   <li>{"event":"commit"|"abort","transactionalId","clientId","records"}: a transaction that had records ended
 *   <li>{"event":"state","from","to"} and {"event":"stopped"} (after SIGTERM: KafkaStreams.close)
 * </ul>
 * processId is the middle of the transactional id (application id, process id, thread index: see
 * docs/OWNERS.md); Streams has no public getter for it.
 */
public final class StreamsApp {
    private static final String USAGE = String.join("\n",
        "usage: java -cp \"$KDP_IT_CLASSPATH\" dev.kdp.it.StreamsApp --bootstrap B --application-id A",
        "       --input T --output T2 [--threads N] [--group-protocol classic|streams]",
        "       [--commit-interval-ms MS] [--transaction-timeout-ms MS] [--session-timeout-ms MS]",
        "       [--state-dir DIR]",
        "Copies T to T2 with exactly_once_v2; JSON lines on stdout (see the class comment), logs on stderr.",
        "--group-protocol streams (KIP-1071) needs Kafka 4.1+ on both sides. --session-timeout-ms sets the",
        "classic main consumer's session.timeout.ms (a streams group's is a broker/group config).");

    private StreamsApp() {}

    public static void main(String[] args) throws Exception {
        Harness h = new Harness("StreamsApp", args, USAGE);
        String appId = h.req("application-id");
        String protocol = h.opt("group-protocol", "classic");
        String version = Harness.kafkaVersion();
        if (!protocol.equals("classic") && !protocol.equals("streams")) {
            h.log("--group-protocol must be classic or streams");
            System.exit(2);
        }
        if (protocol.equals("streams") && version.startsWith("3.")) {
            h.log("--group-protocol streams needs Kafka Streams 4.1+, this is " + version);
            System.exit(2);
        }
        boolean ownStateDir = !h.has("state-dir");
        Path stateDir = ownStateDir ? Files.createTempDirectory("kdp-streams-") : Path.of(h.req("state-dir"));

        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, h.req("bootstrap"));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, h.intOpt("threads", 1));
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        if (protocol.equals("streams")) {
            p.put("group.protocol", "streams"); // StreamsConfig.GROUP_PROTOCOL_CONFIG, 4.1+
        }
        if (h.has("commit-interval-ms")) {
            p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, h.longOpt("commit-interval-ms", 0));
        }
        if (h.has("transaction-timeout-ms")) {
            p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), h.intOpt("transaction-timeout-ms", 0));
        }
        if (h.has("session-timeout-ms")) {
            int session = h.intOpt("session-timeout-ms", 0);
            p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), session);
            p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), Math.max(500, session / 3));
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(h.req("input"), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
            .to(h.req("output"), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

        Harness.emit("started", "pid", Harness.pid(), "kafkaVersion", version, "applicationId", appId,
            "groupProtocol", protocol, "threads", h.intOpt("threads", 1), "stateDir", stateDir.toString());

        KafkaStreams streams = new KafkaStreams(builder.build(), p, new WatchingClientSupplier());
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((to, from) -> {
            Harness.emit("state", "from", from.toString(), "to", to.toString());
            if (to == KafkaStreams.State.RUNNING) {
                Harness.emit("running", "processId", processId(appId, streams), "threads", threads(streams));
            }
            if (to == KafkaStreams.State.ERROR || to == KafkaStreams.State.NOT_RUNNING) {
                done.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close(Duration.ofSeconds(30));
            Harness.emit("stopped");
            if (ownStateDir) {
                deleteTree(stateDir);
            }
        }, "kdp-streams-shutdown"));
        streams.start();
        done.await();
        // ERROR: the shutdown hook closes; exit non-zero so a test sees it
        System.exit(streams.state() == KafkaStreams.State.ERROR ? 1 : 0);
    }

    /** The process id in the thread producers' transactional ids (application-id, process id, thread index). */
    private static String processId(String appId, KafkaStreams streams) {
        for (ThreadMetadata t : streams.metadataForLocalThreads()) {
            // default client.id = <application.id>-<process id>; thread name = <client.id>-StreamThread-<n>
            String name = t.threadName();
            int cut = name.lastIndexOf("-StreamThread-");
            if (cut > appId.length() + 1 && name.startsWith(appId + "-")) {
                return name.substring(appId.length() + 1, cut);
            }
        }
        return null;
    }

    private static List<Scenario.Json> threads(KafkaStreams streams) {
        List<ThreadMetadata> sorted = new ArrayList<>(streams.metadataForLocalThreads());
        sorted.sort(Comparator.comparing(ThreadMetadata::threadName));
        List<Scenario.Json> out = new ArrayList<>();
        for (ThreadMetadata t : sorted) {
            List<Scenario.Json> tasks = new ArrayList<>();
            for (TaskMetadata task : t.activeTasks()) {
                tasks.add(new Scenario.Json().put("taskId", task.taskId().toString()).put("partitions",
                    task.topicPartitions().stream().map(Object::toString).sorted().collect(Collectors.toList())));
            }
            tasks.sort(Comparator.comparing(Object::toString));
            out.add(new Scenario.Json()
                .put("threadName", t.threadName())
                .put("consumerClientId", t.consumerClientId())
                .put("producerClientIds", t.producerClientIds().stream().sorted().collect(Collectors.toList()))
                .put("activeTasks", tasks));
        }
        return out;
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // a temp dir: best effort
        }
    }

    /** Streams' default supplier, except that producers are {@link WatchedProducer}s. */
    static final class WatchingClientSupplier extends DefaultKafkaClientSupplier {
        @Override
        public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
            return new WatchedProducer(config);
        }
    }

    /** Kafka's producer, unchanged, reporting transaction boundaries on stdout. */
    static final class WatchedProducer extends KafkaProducer<byte[], byte[]> {
        private final String transactionalId;
        private final String clientId;
        private final AtomicBoolean opened = new AtomicBoolean();
        private final AtomicLong records = new AtomicLong();

        WatchedProducer(Map<String, Object> config) {
            super(config, new ByteArraySerializer(), new ByteArraySerializer());
            this.transactionalId = (String) config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
            this.clientId = String.valueOf(config.get(ProducerConfig.CLIENT_ID_CONFIG));
            Harness.emit("producer", "clientId", clientId, "transactionalId", transactionalId);
        }

        @Override
        public void beginTransaction() {
            opened.set(false);
            records.set(0);
            super.beginTransaction();
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
            records.incrementAndGet();
            return super.send(record, (md, e) -> {
                if (e == null && opened.compareAndSet(false, true)) {
                    Harness.emit("open", "transactionalId", transactionalId, "clientId", clientId,
                        "topic", md.topic(), "partition", md.partition(), "offset", md.offset());
                }
                if (callback != null) {
                    callback.onCompletion(md, e);
                }
            });
        }

        @Override
        public void commitTransaction() {
            super.commitTransaction();
            ended("commit");
        }

        @Override
        public void abortTransaction() {
            super.abortTransaction();
            ended("abort");
        }

        private void ended(String how) {
            long n = records.getAndSet(0);
            if (n > 0) {
                Harness.emit(how, "transactionalId", transactionalId, "clientId", clientId, "records", n);
            }
        }
    }
}
