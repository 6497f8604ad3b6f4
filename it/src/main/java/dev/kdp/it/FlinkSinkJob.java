package dev.kdp.it;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;

/**
 * A real Flink job (MiniCluster in this JVM) that writes generated records to --topic through
 * flink-connector-kafka's KafkaSink with DeliveryGuarantee.EXACTLY_ONCE and checkpoints every
 * --checkpoint-interval-ms into --checkpoint-dir (retained, so --restore latest starts the next run
 * from the newest completed one). The sink's transactional ids are the connector's own
 * (prefix-subtask-counter, docs/OWNERS.md); this class only watches them through the Admin API.
 *
 * <p>stdout, one JSON object per line:
 * <ul>
 *   <li>{"event":"started","pid","kafkaClientsVersion","prefix","parallelism","naming","restoredFrom"}
 *   <li>{"event":"checkpoint","checkpointId","subtask"}: notifyCheckpointComplete reached the job's map
 *       before the sink (the sink then commits that checkpoint's transaction)
 *   <li>{"event":"txn","transactionalId","state","producerId","producerEpoch","transactionStartTimeMs","topicPartitions"}:
 *       an id of this prefix changed on its coordinator (ListTransactions + DescribeTransactions, every 200 ms)
 *   <li>{"event":"halt","reason"}: just before Runtime.halt (--halt-after-commits): like kill -9
 *   <li>{"event":"stopped"} after SIGTERM (the job is cancelled; its checkpoints are retained)
 * </ul>
 */
public final class FlinkSinkJob {
    private static final String USAGE = String.join("\n",
        "usage: java -cp 'it/target/flink-<v>/lib/*:it/target/flink-<v>/classes' dev.kdp.it.FlinkSinkJob",
        "       --bootstrap B --topic T --prefix P --checkpoint-dir DIR [--parallelism N]",
        "       [--checkpoint-interval-ms MS] [--rate R] [--restore latest|PATH] [--naming incrementing|pooling]",
        "       [--transaction-timeout-ms MS] [--halt-after-commits K]",
        "--halt-after-commits K: once every subtask's K-th transaction (prefix-s-K with incrementing) is",
        "CompleteCommit and a later one of it is Ongoing, print a halt line and Runtime.halt(137): no abort,",
        "no close, the open transactions stay Ongoing (a killed TaskManager).");

    private FlinkSinkJob() {}

    public static void main(String[] args) throws Exception {
        Harness h = new Harness("FlinkSinkJob", args, USAGE);
        String bootstrap = h.req("bootstrap");
        String topic = h.req("topic");
        String prefix = h.req("prefix");
        int parallelism = h.intOpt("parallelism", 1);
        String naming = h.opt("naming", "incrementing");
        File checkpoints = new File(h.req("checkpoint-dir")).getAbsoluteFile();
        String restore = h.has("restore") ? resolveRestore(h.req("restore"), checkpoints) : null;

        Configuration conf = new Configuration();
        // loopback only: the blob server binds jobmanager.bind-host (default: every interface)
        conf.set(JobManagerOptions.ADDRESS, "127.0.0.1");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toURI().toString());
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 3);
        if (restore != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, restore);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        env.enableCheckpointing(h.longOpt("checkpoint-interval-ms", 1000));

        Properties producer = new Properties();
        if (h.has("transaction-timeout-ms")) {
            producer.setProperty("transaction.timeout.ms", h.req("transaction-timeout-ms"));
        }
        KafkaSink<String> sink = KafkaSink.<String>builder()
            .setBootstrapServers(bootstrap)
            .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .setTransactionalIdPrefix(prefix)
            .setTransactionNamingStrategy(naming.equals("pooling") ? TransactionNamingStrategy.POOLING : TransactionNamingStrategy.INCREMENTING)
            .setKafkaProducerConfig(producer)
            .setRecordSerializer(KafkaRecordSerializationSchema.builder()
                .setTopic(topic).setValueSerializationSchema(new SimpleStringSchema()).build())
            .build();
        int rate = h.intOpt("rate", 20);
        DataGeneratorSource<String> source = new DataGeneratorSource<>(
            i -> "rec-" + i, Long.MAX_VALUE, RateLimiterStrategy.perSecond(rate), Types.STRING);
        // one source subtask, rebalanced to every sink subtask: each writes whatever the parallelism
        // (the generator's splits are fixed by its first run's parallelism)
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "ticks").setParallelism(1)
            .rebalance()
            .map(new CheckpointReporter()).name("checkpoint-reporter")
            .sinkTo(sink).name("kafka-sink");

        Harness.emit("started", "pid", Harness.pid(), "kafkaClientsVersion", Harness.kafkaVersion(), "prefix", prefix,
            "parallelism", parallelism, "naming", naming, "restoredFrom", restore);
        JobClient job = env.executeAsync("kdp-flink-sink-" + prefix);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                job.cancel().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("FlinkSinkJob: cancel: " + e);
            }
            Harness.emit("stopped");
        }, "kdp-flink-shutdown"));

        int haltAfter = h.intOpt("halt-after-commits", -1);
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            watch(admin, prefix, parallelism, haltAfter);
        }
    }

    /** "latest": the newest chk-N under DIR/<job id>/ with a _metadata file. */
    private static String resolveRestore(String restore, File checkpoints) {
        if (!restore.equals("latest")) {
            return restore;
        }
        File[] jobs = checkpoints.listFiles(File::isDirectory);
        return Arrays.stream(jobs == null ? new File[0] : jobs)
            .flatMap(j -> Arrays.stream(Objects.requireNonNullElse(j.listFiles(f -> f.getName().startsWith("chk-")
                && new File(f, "_metadata").isFile()), new File[0])))
            .max(Comparator.comparingLong(File::lastModified))
            .map(File::getAbsolutePath)
            .orElseThrow(() -> new IllegalStateException("--restore latest: no completed checkpoint under " + checkpoints));
    }

    /** Prints every state change of this prefix's ids; halts once --halt-after-commits is met. */
    private static void watch(Admin admin, String prefix, int parallelism, int haltAfter) throws Exception {
        Map<String, String> seen = new HashMap<>();
        while (true) {
            Collection<TransactionListing> all = admin.listTransactions().all().get(10, TimeUnit.SECONDS);
            List<String> ids = all.stream().map(TransactionListing::transactionalId)
                .filter(id -> id.startsWith(prefix + "-")).sorted().collect(Collectors.toList());
            Map<String, TransactionDescription> d = ids.isEmpty() ? Map.of()
                : admin.describeTransactions(ids).all().get(10, TimeUnit.SECONDS);
            for (String id : ids) {
                TransactionDescription t = d.get(id);
                if (t == null) {
                    continue;
                }
                String key = t.state() + "/" + t.producerId() + "/" + t.producerEpoch() + "/" + t.topicPartitions();
                if (!key.equals(seen.put(id, key))) {
                    Harness.emit("txn", "transactionalId", id, "state", t.state().toString(), "producerId", t.producerId(),
                        "producerEpoch", t.producerEpoch(), "transactionStartTimeMs", t.transactionStartTimeMs().orElse(-1L),
                        "topicPartitions", t.topicPartitions().stream().map(Object::toString).sorted().collect(Collectors.toList()));
                }
            }
            if (haltAfter > 0 && haltReady(d, prefix, parallelism, haltAfter)) {
                Harness.emit("halt", "reason", "every subtask committed " + prefix + "-<subtask>-" + haltAfter + " and has a later one open");
                Runtime.getRuntime().halt(137);
            }
            Thread.sleep(200);
        }
    }

    private static boolean haltReady(Map<String, TransactionDescription> d, String prefix, int parallelism, int k) {
        for (int s = 0; s < parallelism; s++) {
            TransactionDescription committed = d.get(prefix + "-" + s + "-" + k);
            if (committed == null || committed.state() != TransactionState.COMPLETE_COMMIT) {
                return false;
            }
            boolean laterOpen = false;
            for (Map.Entry<String, TransactionDescription> e : d.entrySet()) {
                String id = e.getKey();
                String head = prefix + "-" + s + "-";
                if (id.startsWith(head) && id.substring(head.length()).chars().allMatch(Character::isDigit)
                    && Long.parseLong(id.substring(head.length())) > k && e.getValue().state() == TransactionState.ONGOING) {
                    laterOpen = true;
                }
            }
            if (!laterOpen) {
                return false;
            }
        }
        return true;
    }

    /** Passes records through; reports completed checkpoints as this subtask sees them. */
    static final class CheckpointReporter extends RichMapFunction<String, String> implements CheckpointListener {
        private int subtask;

        @Override
        public void open(OpenContext ctx) {
            subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        }

        @Override
        public String map(String value) { return value; }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            Harness.emit("checkpoint", "checkpointId", checkpointId, "subtask", subtask);
        }
    }
}
