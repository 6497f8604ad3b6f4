package dev.kdp.it;

import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeProducersOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Scenario driver for the real-Kafka integration tests.
 *
 * <p>Usage: {@code java -cp "$KDP_IT_CLASSPATH" dev.kdp.it.Scenario <subcommand> --bootstrap HOST:PORT[,..] [args]}.
 * Every subcommand prints exactly ONE line of JSON to stdout on success and exits 0; all logging
 * (and errors, with a stack trace) goes to stderr, and failures exit 1 (2 for usage errors).
 * See it/README.md for the meaning of every field.
 */
public final class Scenario extends Subcommand {

    /** Transaction timeout used by every transactional producer (must be <= broker transaction.max.timeout.ms). */
    static final int TXN_TIMEOUT_MS = 3_600_000;

    private Scenario(Map<String, String> opts) {
        super(opts);
    }

    public static void main(String[] args) {
        Subcommand.main("Scenario", args, Scenario::usage, Scenario::new);
    }

    @Override
    void run(String cmd) throws Exception {
        switch (cmd) {
            case "wait-cluster": waitCluster(); break;
            case "create-topic": createTopic(); break;
            case "leaders": leaders(); break;
            case "idempotent": idempotent(); break;
            case "txn-commit": txnCommit(); break;
            case "txn-open": txnOpen(); break; // never returns: halts the JVM
            case "txn-zombie": txnZombie(); break;
            case "fence": fence(); break;
            case "describe-txn": describeTxn(); break;
            case "txn-two-partitions": txnTwoPartitions(); break;
            case "fence-after-write": fenceAfterWrite(); break;
            case "consume-committed": consumeCommitted(); break;
            case "offsets": offsets(); break;
            case "group-consume": groupConsume(); break;
            case "write-batches": writeBatches(); break;
            case "txn-churn": txnChurn(); break;
            case "producer-burst": producerBurst(); break;
            case "jmx-gauge": jmxGauge(); break;
            case "broker-config": brokerConfig(); break;
            default: throw new UsageException("unknown subcommand: " + cmd);
        }
    }

    private static void usage() {
        System.err.println(String.join("\n",
            "usage: Scenario <subcommand> --bootstrap HOST:PORT[,...] [--timeout-seconds S (default 90, hard bound)] [args]",
            "  wait-cluster  --brokers N",
            "  create-topic  --topic T --partitions N --replication-factor R",
            "  leaders       --topic T",
            "  idempotent    --topic T --partition P --records N",
            "  txn-commit    --topic T --partition P --records N --transactional-id ID",
            "  txn-open      --topic T --partition P --records N --transactional-id ID [--hold-seconds S]",
            "                [--transaction-timeout-ms MS (default 3600000)]",
            "  txn-zombie    --topic T --partition P --records N --transactional-id ID --resume-file PATH",
            "                [--transaction-timeout-ms MS]: like txn-open but stays alive; once PATH exists it",
            "                sends one more record and commits, and prints a second JSON line with the outcome",
            "  fence         --topic T --partition P --records N --transactional-id ID",
            "  describe-txn  --transactional-id ID",
            "  txn-two-partitions --topic T --partition-a A --partition-b B --records N --transactional-id ID",
            "  fence-after-write  --topic T --partition-a A --partition-b B --records N --transactional-id ID",
            "  consume-committed  --topic T --partition P [--seconds S (default 60, a bound)] [--until-records N]",
            "  offsets       --topic T --partition P",
            "  group-consume --topic T --group G [--isolation read_committed|read_uncommitted]",
            "                [--protocol classic|consumer] [--until-offset X] [--hold-file PATH]:",
            "                a member of G reads every partition of T to X (capped at the end its isolation",
            "                allows: the LSO or the high watermark; default that end), commits, prints; with",
            "                --hold-file it stays a member (paused) until PATH exists, then reads to the end",
            "                again, commits and prints a second line",
            "  write-batches --topic T --partition P --compression none|gzip|snappy|lz4|zstd --batches B",
            "                --records R [--transactional-id ID]: B batches of R records (compressible",
            "                values) from one idempotent producer, flushed one by one; with an id, each batch",
            "                is its own transaction, committed, and one more batch is aborted",
            "  txn-churn     --topic T --partition P --transactional-id PREFIX --transactions N [--producers K]",
            "                [--state-partitions C --state-partition S]: K producers (ids PREFIX-<n>, chosen so that",
            "                abs(id.hashCode()) % C == S: all on one __transaction_state partition) each commit",
            "                N transactions of one record to P (about 3 log records a transaction)",
            "  producer-burst --topic T --producers N [--transactional-prefix P] [--threads K (default 8)]:",
            "                N new producers, each writing one record to every partition of T (acks=all)",
            "                and closed; with P each is transactional with its own id P-<i> (one",
            "                committed transaction); prints their producer ids",
            "  jmx-gauge     --jmx \"ID=HOST:PORT ...\" [--mbean NAME (default ReplicaManager's",
            "                ProducerIdCount)] [--attribute A (default Value)]: each broker's value over JMX",
            "  broker-config --name CONFIG (--set VALUE | --delete true) [--broker ID (default: the",
            "                cluster-wide default)] [--brokers \"ID ...\"]: incrementalAlterConfigs, then waits",
            "                until DescribeConfigs of every broker shows it",
            "stdout: exactly one JSON line; logs/errors: stderr"));
    }

    // ------------------------------------------------------------------ subcommands

    /** Wait until N brokers are registered (unfenced) and every one of them answers requests itself. */
    private void waitCluster() throws Exception {
        int expected = reqInt("brokers");
        Throwable last = null;
        while (true) {
            try (Admin admin = admin(bootstrap)) {
                DescribeClusterResult dc = admin.describeCluster();
                Collection<Node> nodes = dc.nodes().get();
                if (nodes.size() >= expected) {
                    // every broker must serve metadata itself (a single-bootstrap admin can only
                    // fetch metadata from that one broker first)
                    for (Node n : nodes) {
                        try (Admin one = admin(n.host() + ":" + n.port())) {
                            int seen = one.describeCluster().nodes().get().size();
                            if (seen < expected) throw new IllegalStateException("broker " + n.id() + " sees " + seen + " brokers");
                        }
                    }
                    Map<String, Object> warmed = warmCoordinators(admin);
                    FeatureMetadata fm = admin.describeFeatures().featureMetadata().get();
                    Json j = new Json()
                        .put("clusterId", dc.clusterId().get())
                        .put("brokers", nodes.stream().map(Node::id).sorted().collect(Collectors.toList()));
                    Map<String, Object> features = new TreeMap<>();
                    fm.finalizedFeatures().forEach((k, v) -> features.put(k, (int) v.maxVersionLevel()));
                    j.put("finalizedFeatures", features).put("coordinatorPartitionsReady", warmed);
                    emit(j);
                    return;
                }
                last = new IllegalStateException("only " + nodes.size() + " of " + expected + " brokers registered");
            } catch (Exception e) {
                last = e;
            }
            sleepOrFail(500, "cluster not ready", last);
        }
    }

    /**
     * Make the first transactional / group call of a test as fast as any later one: FindCoordinator
     * creates __transaction_state and __consumer_offsets on first use, and every coordinator
     * partition must then load. Describe one (never created) transactional id and group id that
     * hash to each partition (Utils.abs(id.hashCode()) % partitions, as the coordinators do) until
     * each coordinator answers "not found". Leaves no transactional or group state behind.
     */
    private Map<String, Object> warmCoordinators(Admin admin) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        // first call triggers creation (the admin client retries COORDINATOR_NOT_AVAILABLE)
        probeTxn(admin, "kdp-it-warmup");
        int tn = describeTopic(admin, "__transaction_state").partitions().size();
        for (String id : idsCoveringPartitions("kdp-it-warmup-txn-", tn)) probeTxn(admin, id);
        out.put("__transaction_state", tn);
        probeGroup(admin, "kdp-it-warmup");
        int gn = describeTopic(admin, "__consumer_offsets").partitions().size();
        for (String id : idsCoveringPartitions("kdp-it-warmup-group-", gn)) probeGroup(admin, id);
        out.put("__consumer_offsets", gn);
        return out;
    }

    private static List<String> idsCoveringPartitions(String prefix, int partitions) {
        Map<Integer, String> byPartition = new TreeMap<>();
        for (int i = 0; byPartition.size() < partitions; i++) {
            String id = prefix + i;
            byPartition.putIfAbsent(org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % partitions, id);
        }
        return new ArrayList<>(byPartition.values());
    }

    private void probeTxn(Admin admin, String tid) throws Exception {
        Throwable last = null;
        while (true) {
            try {
                admin.describeTransactions(List.of(tid)).description(tid).get();
                return; // unexpected but fine: the coordinator answered
            } catch (ExecutionException e) {
                if (e.getCause() instanceof org.apache.kafka.common.errors.TransactionalIdNotFoundException) return;
                last = e.getCause();
            }
            sleepOrFail(200, "transaction coordinator for " + tid, last);
        }
    }

    private void probeGroup(Admin admin, String gid) throws Exception {
        Throwable last = null;
        while (true) {
            try {
                admin.describeConsumerGroups(List.of(gid)).describedGroups().get(gid).get();
                return; // a DEAD (empty) group: the coordinator answered
            } catch (ExecutionException e) {
                if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) return;
                last = e.getCause();
            }
            sleepOrFail(200, "group coordinator for " + gid, last);
        }
    }

    private void createTopic() throws Exception {
        String topic = req("topic");
        int partitions = reqInt("partitions");
        short rf = (short) reqInt("replication-factor");
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, rf))).all().get();
            TopicDescription td = waitTopicReady(admin, topic, partitions, rf);
            emit(topicJson(td));
        }
    }

    private void leaders() throws Exception {
        String topic = req("topic");
        try (Admin admin = admin(bootstrap)) {
            emit(topicJson(describeTopic(admin, topic)));
        }
    }

    /** Idempotent, non-transactional producer: N records, flush, close. */
    private void idempotent() throws Exception {
        TopicPartition tp = tp();
        int n = reqInt("records");
        if (n < 1) throw new UsageException("--records must be >= 1");
        Properties p = producerProps();
        try (Admin admin = admin(bootstrap)) {
            long[] offsets;
            long producerId;
            short clientEpoch;
            int clientLastSeq;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                offsets = sendAll(producer, tp, n, "idem");
                Object pie = producerIdAndEpoch(producer);
                producerId = (long) field(pie, "producerId");
                clientEpoch = (short) field(pie, "epoch");
                clientLastSeq = clientNextSequence(producer, tp) - 1;
            }
            // acks=all: the leader has the batch already; wait that every replica agrees
            TopicDescription td = describeTopic(admin, tp.topic());
            ProducerState leaderState = waitProducerState(admin, tp, td, producerId,
                s -> s.lastSequence() == clientLastSeq, "lastSequence == " + clientLastSeq);
            Json j = producerJson("idempotent", tp, n, producerId, leaderState, offsets, td)
                .put("clientProducerEpoch", (int) clientEpoch)
                .put("clientLastSequence", clientLastSeq)
                .put("producerIdSource", "reflection: KafkaProducer.transactionManager.producerIdAndEpoch");
            emit(j);
        }
    }

    /**
     * B batches of R records each, with a codec, flushed one at a time so that each is its own
     * record batch; transactional (commit each, then abort one more) or idempotent. For
     * comparing kdp batches with kafka-dump-log.sh on what real Java producers write.
     */
    private void writeBatches() throws Exception {
        TopicPartition tp = tp();
        int batches = reqInt("batches");
        int records = reqInt("records");
        String codec = req("compression");
        String tid = opts.get("transactional-id");
        Properties p = tid == null ? producerProps() : txnProps(tid);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        long first = -1, last = -1;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            if (tid != null) producer.initTransactions();
            int total = batches + (tid != null ? 1 : 0);
            for (int b = 0; b < total; b++) {
                if (tid != null) producer.beginTransaction();
                List<Future<RecordMetadata>> fs = new ArrayList<>(records);
                for (int i = 0; i < records; i++) {
                    byte[] k = ("k-" + b + "-" + i).getBytes(StandardCharsets.UTF_8);
                    // compressible: the same words over and over
                    byte[] v = ("batch " + b + " record " + i + " " + "kdp batches compare ".repeat(10))
                        .getBytes(StandardCharsets.UTF_8);
                    fs.add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), k, v)));
                }
                producer.flush();
                for (Future<RecordMetadata> f : fs) {
                    long o = f.get().offset();
                    if (first < 0) first = o;
                    last = Math.max(last, o);
                }
                if (tid != null) {
                    if (b < batches) producer.commitTransaction(); else producer.abortTransaction();
                }
            }
        }
        emit(new Json().put("scenario", "write-batches").put("topic", tp.topic())
            .put("partition", tp.partition()).put("compression", codec)
            .put("firstOffset", first).put("lastOffset", last)
            .put("transactional", tid != null));
    }

    /** One committed transaction of N records. */
    private void txnCommit() throws Exception {
        TopicPartition tp = tp();
        int n = reqInt("records");
        if (n < 1) throw new UsageException("--records must be >= 1");
        String tid = req("transactional-id");
        try (Admin admin = admin(bootstrap)) {
            long[] offsets;
            short dataEpoch;
            int clientLastSeq;
            short initEpoch;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(txnProps(tid))) {
                producer.initTransactions();
                initEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
                producer.beginTransaction();
                offsets = sendAll(producer, tp, n, "commit");
                dataEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
                clientLastSeq = clientNextSequence(producer, tp) - 1;
                producer.commitTransaction();
            }
            emit(afterTxnEnd(admin, "txn-commit", tp, n, tid, offsets, initEpoch, dataEpoch, clientLastSeq, "CompleteCommit"));
        }
    }

    /**
     * Begin a transaction, send N records, flush, print, (optionally hold), then halt the JVM
     * without commit/abort/close so nothing can send EndTxn: the transaction stays Ongoing for
     * transaction.timeout.ms (1 hour).
     */
    private void txnOpen() throws Exception {
        long holdSeconds = Long.parseLong(opts.getOrDefault("hold-seconds", "0"));
        Opened o = openTransaction("txn-open");
        emit(o.json.put("holdSeconds", holdSeconds));
        OUT.flush();
        if (holdSeconds > 0) {
            hardDeadlineNanos = System.nanoTime() + Duration.ofSeconds(holdSeconds + 5).toNanos();
            Thread.sleep(holdSeconds * 1000L);
        }
        System.err.println("txn-open: halting JVM without commit/abort/close; transaction " + o.tid + " stays open");
        System.err.flush();
        // Not producer.close(): a graceful close would send EndTxn(abort) for the ongoing transaction.
        Runtime.getRuntime().halt(0);
    }

    /** A transactional producer inside an open transaction, as txn-open and txn-zombie leave it. */
    private static final class Opened {
        final KafkaProducer<byte[], byte[]> producer;
        final TopicPartition tp;
        final String tid;
        final Json json;

        Opened(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, String tid, Json json) {
            this.producer = producer;
            this.tp = tp;
            this.tid = tid;
            this.json = json;
        }
    }

    /**
     * init, begin, --records N to --topic/--partition, and wait until the coordinator says Ongoing
     * and the leader shows the open transaction with the client's last sequence. The JSON line is
     * not printed yet.
     */
    private Opened openTransaction(String scenario) throws Exception {
        TopicPartition tp = tp();
        int n = reqInt("records");
        if (n < 1) throw new UsageException("--records must be >= 1");
        String tid = req("transactional-id");
        int timeoutMs = optInt("transaction-timeout-ms", TXN_TIMEOUT_MS);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(txnProps(tid, timeoutMs));
        producer.initTransactions();
        short initEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
        producer.beginTransaction();
        long[] offsets = sendAll(producer, tp, n, scenario);
        short dataEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
        int clientLastSeq = clientNextSequence(producer, tp) - 1;
        try (Admin admin = admin(bootstrap)) {
            TransactionDescription txn = waitTxnState(admin, tid, "Ongoing");
            TopicDescription td = describeTopic(admin, tp.topic());
            ProducerState leaderState = waitProducerState(admin, tp, td, txn.producerId(),
                s -> s.lastSequence() == clientLastSeq && s.currentTransactionStartOffset().isPresent(),
                "ongoing txn with lastSequence == " + clientLastSeq);
            Json j = producerJson(scenario, tp, n, txn.producerId(), leaderState, offsets, td)
                .put("transactionalId", tid)
                .put("txnState", txn.state().toString())
                .put("txnProducerEpoch", txn.producerEpoch())
                .put("clientInitEpoch", (int) initEpoch)
                .put("clientProducerEpoch", (int) dataEpoch)
                .put("clientLastSequence", clientLastSeq)
                .put("transactionTimeoutMs", txn.transactionTimeoutMs())
                .put("producerIdSource", "Admin.describeTransactions");
            return new Opened(producer, tp, tid, j);
        }
    }

    /**
     * A live producer inside an open transaction that an operator repairs behind its back: prints
     * the txn-open line, waits (bounded by --timeout-seconds) until --resume-file exists, then goes
     * on with its old epoch (one more record, then commit) and prints what happened. After a
     * force-terminate the broker must refuse it; the second line names the exception.
     */
    private void txnZombie() throws Exception {
        java.nio.file.Path resume = java.nio.file.Path.of(req("resume-file"));
        Opened o = openTransaction("txn-zombie");
        emit(o.json);
        OUT.flush();
        while (!java.nio.file.Files.exists(resume)) {
            sleepOrFail(100, "resume file never appeared: " + resume, null);
        }
        String sendError = null;
        String commitError = null;
        try {
            o.producer.send(new ProducerRecord<>(o.tp.topic(), o.tp.partition(),
                "k-zombie".getBytes(StandardCharsets.UTF_8), "zombie-late".getBytes(StandardCharsets.UTF_8))).get();
        } catch (Exception e) {
            sendError = rootName(e);
        }
        if (sendError == null) {
            try {
                o.producer.commitTransaction();
            } catch (Exception e) {
                commitError = rootName(e);
            }
        }
        o.producer.close(Duration.ZERO);
        emit(new Json()
            .put("scenario", "txn-zombie-resumed")
            .put("transactionalId", o.tid)
            .put("sendError", sendError)
            .put("commitError", commitError)
            .put("committed", sendError == null && commitError == null));
    }

    private static String rootName(Exception e) {
        Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return c.getClass().getSimpleName();
    }

    /** A new producer instance with the same transactional.id: initTransactions (fences), then one committed txn of N records. */
    private void fence() throws Exception {
        TopicPartition tp = tp();
        int n = reqInt("records");
        if (n < 0) throw new UsageException("--records must be >= 0");
        String tid = req("transactional-id");
        try (Admin admin = admin(bootstrap)) {
            TransactionDescription before = null;
            try {
                before = admin.describeTransactions(List.of(tid)).description(tid).get();
            } catch (ExecutionException e) {
                System.err.println("fence: no previous transactional state for " + tid + ": " + e.getCause());
            }
            long[] offsets = new long[] {-1, -1};
            short dataEpoch = -1;
            int clientLastSeq = -1;
            short initEpoch;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(txnProps(tid))) {
                producer.initTransactions();
                initEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
                if (n > 0) {
                    producer.beginTransaction();
                    offsets = sendAll(producer, tp, n, "fence");
                    dataEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
                    clientLastSeq = clientNextSequence(producer, tp) - 1;
                    producer.commitTransaction();
                }
            }
            Json j = afterTxnEnd(admin, "fence", tp, n, tid, offsets, initEpoch, dataEpoch, clientLastSeq,
                n > 0 ? "CompleteCommit" : null);
            if (before != null) {
                j.put("previousProducerId", before.producerId())
                    .put("previousTxnProducerEpoch", before.producerEpoch())
                    .put("previousTxnState", before.state().toString());
            }
            emit(j);
        }
    }

    private void describeTxn() throws Exception {
        String tid = req("transactional-id");
        try (Admin admin = admin(bootstrap)) {
            TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
            emit(txnJson(tid, d));
        }
    }

    /**
     * One transactional producer: a committed transaction of N records to partition A, then its
     * next transaction of N records to partition B. Healthy: nothing here may ever be flagged.
     * Prints the coordinator's view and each partition's producer state (all replicas agreeing).
     */
    private void txnTwoPartitions() throws Exception {
        String topic = req("topic");
        TopicPartition a = new TopicPartition(topic, reqInt("partition-a"));
        TopicPartition b = new TopicPartition(topic, reqInt("partition-b"));
        if (a.equals(b)) throw new UsageException("--partition-a and --partition-b must differ");
        int n = reqInt("records");
        if (n < 1) throw new UsageException("--records must be >= 1");
        String tid = req("transactional-id");
        try (Admin admin = admin(bootstrap)) {
            Json pa;
            Json pb;
            short initEpoch;
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(txnProps(tid))) {
                producer.initTransactions();
                initEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
                pa = committedTxn(producer, a, n, "two-a");
                pb = committedTxn(producer, b, n, "two-b");
            }
            TransactionDescription txn = waitTxnState(admin, tid, "CompleteCommit");
            TopicDescription td = describeTopic(admin, topic);
            Json j = new Json()
                .put("scenario", "txn-two-partitions")
                .put("topic", topic)
                .put("transactionalId", tid)
                .put("producerId", txn.producerId())
                .put("txnState", txn.state().toString())
                .put("txnProducerEpoch", txn.producerEpoch())
                .put("clientInitEpoch", (int) initEpoch)
                .put("partitions", List.of(
                    settledPartition(admin, td, a, txn.producerId(), pa),
                    settledPartition(admin, td, b, txn.producerId(), pb)));
            emit(j);
        }
    }

    /**
     * Instance 1 of transactional id X commits N records to partition A and stays alive; instance 2
     * of X starts (initTransactions fences instance 1) and commits N records to partition B. Then
     * instance 1 (the zombie) tries one more transaction to A, which the cluster must reject.
     */
    private void fenceAfterWrite() throws Exception {
        String topic = req("topic");
        TopicPartition a = new TopicPartition(topic, reqInt("partition-a"));
        TopicPartition b = new TopicPartition(topic, reqInt("partition-b"));
        if (a.equals(b)) throw new UsageException("--partition-a and --partition-b must differ");
        int n = reqInt("records");
        if (n < 1) throw new UsageException("--records must be >= 1");
        String tid = req("transactional-id");
        try (Admin admin = admin(bootstrap)) {
            KafkaProducer<byte[], byte[]> first = new KafkaProducer<>(txnProps(tid));
            first.initTransactions();
            short firstInit = (short) field(producerIdAndEpoch(first), "epoch");
            Json pa = committedTxn(first, a, n, "fenced-a");
            TransactionDescription afterFirst = waitTxnState(admin, tid, "CompleteCommit");
            Json pb;
            short secondInit;
            long secondInitStartMs;
            long secondInitEndMs;
            try (KafkaProducer<byte[], byte[]> second = new KafkaProducer<>(txnProps(tid))) {
                secondInitStartMs = System.currentTimeMillis();
                second.initTransactions();
                secondInitEndMs = System.currentTimeMillis();
                secondInit = (short) field(producerIdAndEpoch(second), "epoch");
                pb = committedTxn(second, b, n, "fencer-b");
            }
            TransactionDescription txn = waitTxnState(admin, tid, "CompleteCommit");
            TopicDescription td = describeTopic(admin, topic);
            Json sa = settledPartition(admin, td, a, txn.producerId(), pa);
            Json sb = settledPartition(admin, td, b, txn.producerId(), pb);
            ProducerState aBefore = producerState(admin, a, OptionalInt.empty(), txn.producerId());
            // the zombie: instance 1 tries again on A with its old epoch
            String zombieError = null;
            try {
                first.beginTransaction();
                first.send(new ProducerRecord<>(a.topic(), a.partition(),
                    "k-zombie".getBytes(StandardCharsets.UTF_8), "zombie".getBytes(StandardCharsets.UTF_8))).get();
                first.commitTransaction();
            } catch (Exception e) {
                Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                zombieError = c.getClass().getSimpleName();
            } finally {
                first.close(Duration.ZERO);
            }
            ProducerState aAfter = producerState(admin, a, OptionalInt.empty(), txn.producerId());
            Json j = new Json()
                .put("scenario", "fence-after-write")
                .put("topic", topic)
                .put("transactionalId", tid)
                .put("producerId", txn.producerId())
                .put("txnState", txn.state().toString())
                .put("txnProducerEpoch", txn.producerEpoch())
                .put("firstTxnProducerEpoch", afterFirst.producerEpoch())
                .put("firstClientInitEpoch", (int) firstInit)
                .put("secondClientInitEpoch", (int) secondInit)
                .put("secondInitStartMs", secondInitStartMs)
                .put("secondInitEndMs", secondInitEndMs)
                .put("partitions", List.of(sa, sb))
                .put("zombieError", zombieError)
                .put("zombieChangedPartitionA", aAfter == null || !sameState(aAfter, aBefore));
            emit(j);
        }
    }

    /**
     * Many small committed transactions, for a __transaction_state partition of many records:
     * K producers in parallel threads, each with its own transactional id on the same
     * __transaction_state partition (when --state-partitions/--state-partition are given).
     */
    private void txnChurn() throws Exception {
        TopicPartition tp = tp();
        String prefix = req("transactional-id");
        int n = reqInt("transactions");
        int k = optInt("producers", 1);
        int count = optInt("state-partitions", 0);
        int wanted = optInt("state-partition", -1);
        List<String> ids = new ArrayList<>();
        for (int i = 0; ids.size() < k; i++) {
            String id = prefix + "-" + i;
            if (count <= 0 || org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % count == wanted) {
                ids.add(id);
            }
        }
        hardDeadlineNanos = Long.MAX_VALUE; // a long run: --timeout-seconds bounds each producer below
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.atomic.AtomicLong committed = new java.util.concurrent.atomic.AtomicLong();
        for (String id : ids) {
            Thread t = new Thread(() -> {
                Properties props = txnProps(id);
                props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
                    producer.initTransactions();
                    for (int i = 0; i < n; i++) {
                        producer.beginTransaction();
                        producer.send(new ProducerRecord<>(tp.topic(), tp.partition(),
                            ("k-" + i).getBytes(StandardCharsets.UTF_8), ("churn-" + i).getBytes(StandardCharsets.UTF_8)));
                        producer.commitTransaction();
                        committed.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new RuntimeException("txn-churn: " + failures.size() + " producers failed", failures.get(0));
        }
        emit(new Json()
            .put("scenario", "txn-churn")
            .put("transactionalIds", ids)
            .put("committed", committed.get()));
    }

    /** One committed transaction of n records to tp; what the client sent. */
    private static Json committedTxn(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, int n, String tag)
            throws Exception {
        producer.beginTransaction();
        long[] offsets = sendAll(producer, tp, n, tag);
        short dataEpoch = (short) field(producerIdAndEpoch(producer), "epoch");
        int clientLastSeq = clientNextSequence(producer, tp) - 1;
        producer.commitTransaction();
        return new Json()
            .put("partition", tp.partition())
            .put("baseOffset", offsets[0])
            .put("lastOffset", offsets[1])
            .put("clientProducerEpoch", (int) dataEpoch)
            .put("clientLastSequence", clientLastSeq);
    }

    /** Waits until tp's leader and every replica show no open transaction of producerId; adds that state to sent. */
    private Json settledPartition(Admin admin, TopicDescription td, TopicPartition tp, long producerId, Json sent)
            throws Exception {
        ProducerState st = waitProducerState(admin, tp, td, producerId,
            s -> s.currentTransactionStartOffset().isEmpty(), "no ongoing transaction");
        TopicPartitionInfo info = td.partitions().get(tp.partition());
        return sent
            .put("producerEpoch", st.producerEpoch())
            .put("lastSequence", st.lastSequence())
            .put("lastTimestamp", st.lastTimestamp())
            .put("coordinatorEpoch", st.coordinatorEpoch().isPresent() ? st.coordinatorEpoch().getAsInt() : -1)
            .put("currentTransactionStartOffset",
                st.currentTransactionStartOffset().isPresent() ? st.currentTransactionStartOffset().getAsLong() : -1L)
            .put("leader", info.leader() == null ? -1 : info.leader().id());
    }

    /**
     * A read_committed consumer (no group: assign + seekToBeginning) reads the partition until its
     * position reaches the read_committed end offset (the LSO), or --until-records records arrived,
     * or --seconds passed (a bound, not the normal end: reachedEnd says which), and reports what it
     * read: a transaction left open stops it at the LSO however long it waits.
     */
    private void consumeCommitted() throws Exception {
        TopicPartition tp = tp();
        long seconds = Long.parseLong(opts.getOrDefault("seconds", "60"));
        int until = optInt("until-records", Integer.MAX_VALUE);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        int records = 0;
        long highest = -1;
        long position;
        long endOffset;
        boolean reachedEnd = false;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
            while (records < until && System.nanoTime() < end) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    records++;
                    highest = Math.max(highest, r.offset());
                }
                // read_committed: endOffsets is the last stable offset
                if (c.position(tp, Duration.ofSeconds(10)) >= c.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp)) {
                    reachedEnd = true;
                    break;
                }
            }
            position = c.position(tp, Duration.ofSeconds(10));
            endOffset = c.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
        }
        emit(new Json()
            .put("scenario", "consume-committed")
            .put("topic", tp.topic())
            .put("partition", tp.partition())
            .put("records", records)
            .put("highestOffset", highest)
            .put("position", position)
            .put("endOffset", endOffset)
            .put("reachedEnd", reachedEnd)
            .put("seconds", seconds));
    }

    /** High watermark (latest, read_uncommitted) and last stable offset (latest, read_committed). */
    private void offsets() throws Exception {
        TopicPartition tp = tp();
        try (Admin admin = admin(bootstrap)) {
            ListOffsetsResult.ListOffsetsResultInfo hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(tp).get();
            ListOffsetsResult.ListOffsetsResultInfo lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp).get();
            ListOffsetsResult.ListOffsetsResultInfo earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest()))
                .partitionResult(tp).get();
            emit(new Json()
                .put("scenario", "offsets")
                .put("topic", tp.topic())
                .put("partition", tp.partition())
                .put("logStartOffset", earliest.offset())
                .put("highWatermark", hw.offset())
                .put("lastStableOffset", lso.offset()));
        }
    }


    /**
     * A consumer that is a member of --group (subscribe, so the group has a member and a state
     * while it runs): reads every partition of --topic until its position reaches the target
     * (--until-offset, capped at the end offset its isolation level allows: the LSO under
     * read_committed, the high watermark under read_uncommitted; default: that end), commits
     * exactly the target (commitSync) and prints one line. Without --hold-file it then closes
     * (leaves the group: Empty, its offsets kept). With --hold-file PATH it stays a member, its
     * partitions paused so the position stays, until PATH exists (bounded by --timeout-seconds);
     * then it reads to the end again, commits and prints a second line, and closes.
     */
    private void groupConsume() throws Exception {
        String topic = req("topic");
        String group = req("group");
        String isolation = opts.getOrDefault("isolation", "read_committed");
        if (!isolation.equals("read_committed") && !isolation.equals("read_uncommitted")) {
            throw new UsageException("--isolation must be read_committed or read_uncommitted");
        }
        String protocol = opts.getOrDefault("protocol", "classic");
        if (!protocol.equals("classic") && !protocol.equals("consumer")) {
            throw new UsageException("--protocol must be classic or consumer");
        }
        long until = opts.containsKey("until-offset") ? Long.parseLong(req("until-offset")) : Long.MAX_VALUE;
        String hold = opts.get("hold-file");
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // the config exists from kafka-clients 3.7; "classic" is the default there
        p.put("group.protocol", protocol);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            int partitions;
            try (Admin admin = admin(bootstrap)) {
                partitions = describeTopic(admin, topic).partitions().size();
            }
            c.subscribe(List.of(topic));
            // the coordinator assigns every partition to the one member; records may come with it
            int early = 0;
            while (c.assignment().size() < partitions) {
                early += c.poll(Duration.ofMillis(100)).count();
                if (c.assignment().size() < partitions) sleepOrFail(0, "assignment of " + topic + " in " + group, null);
            }
            Json first = readAndCommit(c, group, topic, isolation, protocol, until, "group-consume", early);
            if (hold == null) {
                emit(first);
                return;
            }
            emit(first.put("holding", true));
            java.nio.file.Path resume = java.nio.file.Path.of(hold);
            while (!java.nio.file.Files.exists(resume)) {
                c.pause(c.assignment());
                c.poll(Duration.ofMillis(100)); // stays a member: polls within max.poll.interval.ms
                sleepOrFail(0, "hold file never appeared: " + resume, null);
            }
            c.resume(c.assignment());
            emit(readAndCommit(c, group, topic, isolation, protocol, Long.MAX_VALUE, "group-consume-resumed", 0));
        }
    }

    /** Reads each assigned partition until its position reaches min(until, end), commits that, describes it. */
    private Json readAndCommit(KafkaConsumer<byte[], byte[]> c, String group, String topic, String isolation,
                               String protocol, long until, String scenario, int early) throws Exception {
        // the end a consumer of this isolation may reach (read_committed: the LSO)
        Map<TopicPartition, Long> end = c.endOffsets(c.assignment(), Duration.ofSeconds(10));
        Map<TopicPartition, Long> target = new TreeMap<>(java.util.Comparator.comparingInt(TopicPartition::partition));
        end.forEach((tp, e) -> target.put(tp, Math.min(until, e)));
        int records = early;
        while (true) {
            boolean done = true;
            for (Map.Entry<TopicPartition, Long> t : target.entrySet()) {
                done &= c.position(t.getKey(), Duration.ofSeconds(10)) >= t.getValue();
            }
            if (done) break;
            records += c.poll(Duration.ofMillis(200)).count();
            sleepOrFail(0, "consumer of " + group + " reaching " + target, null);
        }
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        target.forEach((tp, o) -> commit.put(tp, new OffsetAndMetadata(o)));
        c.commitSync(commit, Duration.ofSeconds(30));
        List<Object> parts = new ArrayList<>();
        for (Map.Entry<TopicPartition, Long> t : target.entrySet()) {
            parts.add(new Json()
                .put("partition", t.getKey().partition())
                .put("committed", t.getValue())
                .put("position", c.position(t.getKey(), Duration.ofSeconds(10)))
                .put("endOffset", end.get(t.getKey())));
        }
        return new Json()
            .put("scenario", scenario)
            .put("group", group)
            .put("topic", topic)
            .put("isolation", isolation)
            .put("protocol", protocol)
            .put("memberId", c.groupMetadata().memberId())
            .put("generationId", c.groupMetadata().generationId())
            .put("records", records)
            .put("partitions", parts);
    }

    // ------------------------------------------------------------------ shared pieces

    private Json afterTxnEnd(Admin admin, String scenario, TopicPartition tp, int n, String tid, long[] offsets,
                             short initEpoch, short dataEpoch, int clientLastSeq, String wantState) throws Exception {
        TransactionDescription txn = wantState == null
            ? admin.describeTransactions(List.of(tid)).description(tid).get()
            : waitTxnState(admin, tid, wantState);
        TopicDescription td = describeTopic(admin, tp.topic());
        ProducerState leaderState = null;
        if (n > 0) {
            // the commit marker has been written once the coordinator reports CompleteCommit;
            // wait until the leader and every follower show no open transaction for this producer
            leaderState = waitProducerState(admin, tp, td, txn.producerId(),
                s -> s.currentTransactionStartOffset().isEmpty(), "no ongoing transaction");
        } else {
            // fence without records: whatever the partition holds for this producer id (null if nothing)
            leaderState = producerState(admin, tp, OptionalInt.empty(), txn.producerId());
        }
        Json j = producerJson(scenario, tp, n, txn.producerId(), leaderState, offsets, td)
            .put("transactionalId", tid)
            .put("txnState", txn.state().toString())
            .put("txnProducerEpoch", txn.producerEpoch())
            .put("clientInitEpoch", (int) initEpoch)
            .put("clientProducerEpoch", (int) dataEpoch)
            .put("clientLastSequence", clientLastSeq)
            .put("producerIdSource", "Admin.describeTransactions");
        return j;
    }

    private Json producerJson(String scenario, TopicPartition tp, int n, long producerId, ProducerState st,
                              long[] offsets, TopicDescription td) {
        TopicPartitionInfo info = td.partitions().get(tp.partition());
        Json j = new Json()
            .put("scenario", scenario)
            .put("topic", tp.topic())
            .put("partition", tp.partition())
            .put("producerId", producerId)
            .put("producerEpoch", st == null ? null : st.producerEpoch())
            .put("records", n)
            .put("lastSequence", st == null ? null : st.lastSequence())
            .put("baseOffset", offsets[0])
            .put("lastOffset", offsets[1]);
        if (st != null) {
            j.put("lastTimestamp", st.lastTimestamp())
                .put("coordinatorEpoch", st.coordinatorEpoch().isPresent() ? st.coordinatorEpoch().getAsInt() : -1)
                .put("currentTransactionStartOffset",
                    st.currentTransactionStartOffset().isPresent() ? st.currentTransactionStartOffset().getAsLong() : -1L);
        }
        j.put("leader", info.leader() == null ? -1 : info.leader().id())
            .put("replicas", info.replicas().stream().map(Node::id).collect(Collectors.toList()));
        return j;
    }

    private static Json txnJson(String tid, TransactionDescription d) {
        return new Json()
            .put("transactionalId", tid)
            .put("coordinatorId", d.coordinatorId())
            .put("state", d.state().toString())
            .put("producerId", d.producerId())
            .put("producerEpoch", d.producerEpoch())
            .put("transactionTimeoutMs", d.transactionTimeoutMs())
            .put("transactionStartTimeMs", d.transactionStartTimeMs().isPresent() ? d.transactionStartTimeMs().getAsLong() : -1L)
            .put("topicPartitions", d.topicPartitions().stream().map(TopicPartition::toString).sorted().collect(Collectors.toList()));
    }

    private static Json topicJson(TopicDescription td) {
        List<Object> parts = new ArrayList<>();
        for (TopicPartitionInfo p : td.partitions()) {
            parts.add(new Json()
                .put("partition", p.partition())
                .put("leader", p.leader() == null ? -1 : p.leader().id())
                .put("replicas", p.replicas().stream().map(Node::id).collect(Collectors.toList()))
                .put("isr", p.isr().stream().map(Node::id).collect(Collectors.toList())));
        }
        return new Json().put("topic", td.name()).put("topicId", td.topicId().toString()).put("partitions", parts);
    }

    private TopicDescription describeTopic(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    }

    /** All leaders known, full ISR, and every replica broker has the partition locally. */
    private TopicDescription waitTopicReady(Admin admin, String topic, int partitions, int rf) throws Exception {
        Throwable last = null;
        while (true) {
            try {
                TopicDescription td = describeTopic(admin, topic);
                boolean ok = td.partitions().size() == partitions;
                for (TopicPartitionInfo p : td.partitions()) {
                    ok &= p.leader() != null && p.leader().id() >= 0 && p.isr().size() == rf;
                }
                if (ok) {
                    // DescribeProducers aimed at a broker fails until that broker hosts the replica
                    for (TopicPartitionInfo p : td.partitions()) {
                        TopicPartition tp = new TopicPartition(topic, p.partition());
                        for (Node r : p.replicas()) {
                            admin.describeProducers(List.of(tp), new DescribeProducersOptions().brokerId(r.id()))
                                .partitionResult(tp).get();
                        }
                    }
                    return td;
                }
                last = new IllegalStateException("partitions not ready: " + td);
            } catch (ExecutionException e) {
                last = e.getCause();
            }
            sleepOrFail(200, "topic " + topic + " not ready", last);
        }
    }

    private TransactionDescription waitTxnState(Admin admin, String tid, String state) throws Exception {
        Throwable last = null;
        while (true) {
            try {
                TransactionDescription d = admin.describeTransactions(List.of(tid)).description(tid).get();
                if (d.state().toString().equals(state)) return d;
                last = new IllegalStateException("transaction " + tid + " is " + d.state() + ", want " + state);
            } catch (ExecutionException e) {
                last = e.getCause();
            }
            sleepOrFail(100, "transaction state", last);
        }
    }

    /**
     * Poll DescribeProducers on the leader until the entry for producerId satisfies cond, then
     * until every other replica reports an identical entry (so tests may query any replica at once).
     */
    private ProducerState waitProducerState(Admin admin, TopicPartition tp, TopicDescription td, long producerId,
                                            java.util.function.Predicate<ProducerState> cond, String what) throws Exception {
        TopicPartitionInfo info = td.partitions().get(tp.partition());
        Throwable last = null;
        while (true) {
            try {
                ProducerState leader = producerState(admin, tp, OptionalInt.empty(), producerId);
                if (leader != null && cond.test(leader)) {
                    boolean same = true;
                    for (Node r : info.replicas()) {
                        ProducerState rs = producerState(admin, tp, OptionalInt.of(r.id()), producerId);
                        if (rs == null || !sameState(rs, leader)) {
                            same = false;
                            last = new IllegalStateException("replica " + r.id() + " has " + rs + ", leader has " + leader);
                            break;
                        }
                    }
                    if (same) return leader;
                } else {
                    last = new IllegalStateException("leader has " + leader + ", want " + what);
                }
            } catch (ExecutionException e) {
                last = e.getCause();
            }
            sleepOrFail(100, "producer state of " + producerId + " on " + tp, last);
        }
    }

    private static boolean sameState(ProducerState a, ProducerState b) {
        return a.producerId() == b.producerId() && a.producerEpoch() == b.producerEpoch()
            && a.lastSequence() == b.lastSequence()
            && a.currentTransactionStartOffset().equals(b.currentTransactionStartOffset());
    }

    private static ProducerState producerState(Admin admin, TopicPartition tp, OptionalInt broker, long producerId) throws Exception {
        DescribeProducersOptions o = new DescribeProducersOptions();
        broker.ifPresent(o::brokerId);
        List<ProducerState> states = admin.describeProducers(List.of(tp), o).partitionResult(tp).get().activeProducers();
        for (ProducerState s : states) if (s.producerId() == producerId) return s;
        return null;
    }

    /** Send n records (key k-i, value {tag}-i) to exactly tp, flush, wait for every ack; returns {firstOffset, lastOffset}. */
    private static long[] sendAll(KafkaProducer<byte[], byte[]> producer, TopicPartition tp, int n, String tag) throws Exception {
        List<Future<RecordMetadata>> fs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byte[] k = ("k-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] v = (tag + "-" + i).getBytes(StandardCharsets.UTF_8);
            fs.add(producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), k, v)));
        }
        producer.flush();
        long first = fs.get(0).get().offset();
        long lastOff = fs.get(n - 1).get().offset();
        for (Future<RecordMetadata> f : fs) f.get();
        return new long[] {first, lastOff};
    }

    private Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        // records accumulate until flush() so N small records normally form one batch
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10000");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(1 << 20));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        return p;
    }

    private Properties txnProps(String tid) {
        return txnProps(tid, TXN_TIMEOUT_MS);
    }

    private Properties txnProps(String tid, int timeoutMs) {
        Properties p = producerProps();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, tid);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, String.valueOf(timeoutMs));
        return p;
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        return Admin.create(p);
    }

    /**
     * N new producers (the burst a client making a producer per task makes), in K threads: each
     * writes one record to every partition of the topic and is closed; transactional ones get
     * their own transactional id under the prefix and commit one transaction.
     */
    private void producerBurst() throws Exception {
        String topic = req("topic");
        int n = reqInt("producers");
        int threads = optInt("threads", 8);
        String prefix = opts.get("transactional-prefix");
        if (n < 1 || threads < 1) throw new UsageException("--producers and --threads must be >= 1");
        int partitions;
        try (Admin admin = admin(bootstrap)) {
            partitions = describeTopic(admin, topic).partitions().size();
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        List<java.util.concurrent.Future<Long>> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            final int task = i;
            ids.add(pool.submit(() -> {
                Properties p = prefix == null ? producerProps() : txnProps(prefix + "-" + task, 60_000);
                p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                    if (prefix != null) {
                        producer.initTransactions();
                        producer.beginTransaction();
                    }
                    List<Future<RecordMetadata>> fs = new ArrayList<>(partitions);
                    for (int part = 0; part < partitions; part++) {
                        byte[] v = ("burst-" + task).getBytes(StandardCharsets.UTF_8);
                        fs.add(producer.send(new ProducerRecord<>(topic, part, null, v)));
                    }
                    if (prefix != null) producer.commitTransaction();
                    else producer.flush();
                    for (Future<RecordMetadata> f : fs) f.get();
                    return (Long) field(producerIdAndEpoch(producer), "producerId");
                }
            }));
        }
        pool.shutdown();
        List<Long> out = new ArrayList<>(n);
        for (java.util.concurrent.Future<Long> f : ids) out.add(f.get());
        emit(new Json().put("topic", topic).put("partitions", partitions).put("producers", n)
            .put("transactional", prefix != null).put("producerIds", out));
    }

    /** A JMX attribute of each broker (default: kafka.server ReplicaManager's ProducerIdCount). */
    private void jmxGauge() throws Exception {
        String mbean = opts.getOrDefault("mbean", "kafka.server:type=ReplicaManager,name=ProducerIdCount");
        String attribute = opts.getOrDefault("attribute", "Value");
        Map<String, Object> values = new TreeMap<>();
        for (String kv : req("jmx").trim().split("\\s+")) {
            String[] idAddr = kv.split("=", 2);
            if (idAddr.length != 2) throw new UsageException("--jmx: want ID=HOST:PORT, got " + kv);
            javax.management.remote.JMXServiceURL url = new javax.management.remote.JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://" + idAddr[1] + "/jmxrmi");
            try (javax.management.remote.JMXConnector c = javax.management.remote.JMXConnectorFactory.connect(url)) {
                Object v = c.getMBeanServerConnection().getAttribute(new javax.management.ObjectName(mbean), attribute);
                values.put(idAddr[0], v);
            }
        }
        emit(new Json().put("mbean", mbean).put("attribute", attribute).put("values", values));
    }

    /**
     * Sets (or deletes) a dynamic broker config, cluster-wide or for one broker, then waits until
     * every broker of --brokers (default: all) reports it through DescribeConfigs.
     */
    private void brokerConfig() throws Exception {
        String name = req("name");
        String value = opts.get("set");
        boolean delete = Boolean.parseBoolean(opts.getOrDefault("delete", "false"));
        if ((value == null) == !delete) throw new UsageException("give --set VALUE or --delete true");
        String broker = opts.getOrDefault("broker", "");
        org.apache.kafka.common.config.ConfigResource target = new org.apache.kafka.common.config.ConfigResource(
            org.apache.kafka.common.config.ConfigResource.Type.BROKER, broker);
        org.apache.kafka.clients.admin.AlterConfigOp op = new org.apache.kafka.clients.admin.AlterConfigOp(
            new org.apache.kafka.clients.admin.ConfigEntry(name, value),
            delete ? org.apache.kafka.clients.admin.AlterConfigOp.OpType.DELETE
                   : org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET);
        try (Admin admin = admin(bootstrap)) {
            admin.incrementalAlterConfigs(Map.of(target, List.of(op))).all().get();
            List<String> brokers = new ArrayList<>();
            if (opts.containsKey("brokers")) {
                brokers.addAll(List.of(opts.get("brokers").trim().split("\\s+")));
            } else if (!broker.isEmpty()) {
                brokers.add(broker);
            } else {
                for (Node node : admin.describeCluster().nodes().get()) brokers.add(String.valueOf(node.id()));
            }
            Map<String, Object> seen = new TreeMap<>();
            Throwable last = null;
            while (true) {
                boolean all = true;
                for (String b : brokers) {
                    org.apache.kafka.common.config.ConfigResource r = new org.apache.kafka.common.config.ConfigResource(
                        org.apache.kafka.common.config.ConfigResource.Type.BROKER, b);
                    org.apache.kafka.clients.admin.ConfigEntry e = admin.describeConfigs(List.of(r)).all().get().get(r).get(name);
                    String now = e == null ? null : e.value();
                    boolean dynamic = e != null && (e.source() == org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG
                        || e.source() == org.apache.kafka.clients.admin.ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
                    seen.put(b, new Json().put("value", now).put("source", e == null ? null : e.source().toString()));
                    if (delete ? dynamic : !Objects.equals(now, value)) {
                        all = false;
                        last = new IllegalStateException("broker " + b + " reports " + name + "=" + now + " (" + (e == null ? "-" : e.source()) + ")");
                    }
                }
                if (all) break;
                sleepOrFail(200, "broker config " + name, last);
            }
            emit(new Json().put("name", name).put("set", value).put("deleted", delete).put("broker", broker).put("brokers", seen));
        }
    }

    // ------------------------------------------------------------------ reflection on client internals
    // KafkaProducer keeps the producer id/epoch it was given by InitProducerId in its private
    // TransactionManager (present for idempotent AND transactional producers):
    //   KafkaProducer.transactionManager  (org.apache.kafka.clients.producer.internals.TransactionManager)
    //     .producerIdAndEpoch             (org.apache.kafka.common.utils.ProducerIdAndEpoch: public final long producerId, short epoch)
    //     .sequenceNumber(TopicPartition) (package-private: next sequence to assign on that partition)
    // Checked against kafka-clients 4.1.1 with javap.

    private static Object transactionManager(KafkaProducer<?, ?> producer) throws Exception {
        Field f = KafkaProducer.class.getDeclaredField("transactionManager");
        f.setAccessible(true);
        return Objects.requireNonNull(f.get(producer), "producer has no TransactionManager");
    }

    private static Object producerIdAndEpoch(KafkaProducer<?, ?> producer) throws Exception {
        Object tm = transactionManager(producer);
        Field f = tm.getClass().getDeclaredField("producerIdAndEpoch");
        f.setAccessible(true);
        return f.get(tm);
    }

    private static int clientNextSequence(KafkaProducer<?, ?> producer, TopicPartition tp) throws Exception {
        Object tm = transactionManager(producer);
        Method m = tm.getClass().getDeclaredMethod("sequenceNumber", TopicPartition.class);
        m.setAccessible(true);
        return (int) m.invoke(tm, tp);
    }

    private static Object field(Object o, String name) throws Exception {
        Field f = o.getClass().getField(name);
        return f.get(o);
    }

    // ------------------------------------------------------------------ small utilities

    /** Minimal ordered JSON object writer (no external dependency). */
    static final class Json {
        private final Map<String, Object> m = new LinkedHashMap<>();

        Json put(String k, Object v) { m.put(k, v); return this; }

        @Override public String toString() {
            StringBuilder sb = new StringBuilder();
            write(sb, this);
            return sb.toString();
        }

        private static void write(StringBuilder sb, Object v) {
            if (v == null) {
                sb.append("null");
            } else if (v instanceof Json) {
                write(sb, ((Json) v).m);
            } else if (v instanceof Map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) sb.append(',');
                    first = false;
                    str(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            } else if (v instanceof Collection) {
                sb.append('[');
                boolean first = true;
                for (Object o : (Collection<?>) v) {
                    if (!first) sb.append(',');
                    first = false;
                    write(sb, o);
                }
                sb.append(']');
            } else if (v instanceof Number || v instanceof Boolean) {
                sb.append(v);
            } else {
                str(sb, v.toString());
            }
        }

        private static void str(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"': sb.append("\\\""); break;
                    case '\\': sb.append("\\\\"); break;
                    case '\n': sb.append("\\n"); break;
                    case '\r': sb.append("\\r"); break;
                    case '\t': sb.append("\\t"); break;
                    default:
                        if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                        else sb.append(c);
                }
            }
            sb.append('"');
        }
    }
}
