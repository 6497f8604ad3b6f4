package dev.kdp.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The group kinds of Kafka 4.x only: share groups (KIP-932, their isolation is the group config
 * share.isolation.level) and Streams groups (KIP-1071, group.protocol=streams). Compiled only
 * for a 4.x classpath (it/pom.xml's 3.x profile leaves it out); LagScenario reaches it by name.
 */
final class LagGroups {

    private final LagScenario s;

    LagGroups(LagScenario s) {
        this.s = s;
    }

    /** LagScenario's entry: the command's method of this class, by name (absent on a 3.x classpath). */
    static void run(LagScenario s, String method) throws Exception {
        LagGroups g = new LagGroups(s);
        switch (method) {
            case "share-consume": g.shareConsume(); break;
            case "share-offsets": g.shareOffsets(); break;
            case "group-config": g.groupConfig(); break;
            case "streams-run": g.streamsRun(); break;
            case "list-groups": g.listGroups(); break;
            default: throw new Subcommand.UsageException("unknown command: " + method);
        }
    }

    // ------------------------------------------------------------------ share groups

    /**
     * Sets the group's share.isolation.level (and share.auto.offset.reset=earliest, so the group
     * starts at the log start), then one KafkaShareConsumer in explicit acknowledgement mode
     * ACCEPTs the first --accept N records it is given and RELEASEs any others, commits the
     * acknowledgements (commitSync) and closes. Prints what it got and then what
     * DescribeShareGroupOffsets (Admin.listShareGroupOffsets) reports for the group.
     */
    void shareConsume() throws Exception {
        String group = s.req("group");
        String topic = s.req("topic");
        int accept = s.reqInt("accept");
        String isolation = s.opts.getOrDefault("isolation", "read_committed");
        long start = System.nanoTime();
        try (Admin admin = s.admin()) {
            alterGroupConfig(admin, group, Map.of("share.isolation.level", isolation, "share.auto.offset.reset", "earliest"));
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
            int accepted = 0;
            int released = 0;
            List<Long> acceptedOffsets = new ArrayList<>();
            try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
                c.subscribe(List.of(topic));
                while (accepted < accept) {
                    int got = 0;
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                        got++;
                        if (accepted < accept) {
                            c.acknowledge(r, AcknowledgeType.ACCEPT);
                            accepted++;
                            acceptedOffsets.add(r.offset());
                        } else {
                            c.acknowledge(r, AcknowledgeType.RELEASE);
                            released++;
                        }
                    }
                    if (got > 0) c.commitSync(Duration.ofSeconds(30));
                    s.sleepOrFail(0, group + " accepting " + accept + " records (" + accepted + " so far)", null);
                }
                c.commitSync(Duration.ofSeconds(30));
            }
            LagScenario.emit(new Scenario.Json()
                .put("scenario", "share-consume").put("group", group).put("topic", topic)
                .put("isolation", isolation)
                .put("accepted", accepted).put("released", released)
                .put("acceptedOffsets", acceptedOffsets)
                .put("offsets", shareOffsets(admin, group))
                .put("groupConfig", describeGroupConfig(admin, group))
                .put("millis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        }
    }

    void shareOffsets() throws Exception {
        String group = s.req("group");
        try (Admin admin = s.admin()) {
            ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
            LagScenario.emit(new Scenario.Json().put("scenario", "share-offsets").put("group", group)
                .put("groupState", d.groupState().toString()).put("members", d.members().size())
                .put("offsets", shareOffsets(admin, group)));
        }
    }

    /**
     * Per partition: the share-partition start offset, DescribeShareGroupOffsets' Lag (v1,
     * KIP-1226; -1 absent), and for comparison the partition's high watermark and LSO.
     */
    private List<Object> shareOffsets(Admin admin, String group) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> m = admin
            .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
            .partitionsToOffsetInfo(group).get();
        List<Object> out = new ArrayList<>();
        for (Map.Entry<TopicPartition, SharePartitionOffsetInfo> e : new TreeMap<>(byName(m)).values()) {
            TopicPartition tp = e.getKey();
            SharePartitionOffsetInfo i = e.getValue();
            out.add(new Scenario.Json().put("topic", tp.topic()).put("partition", tp.partition())
                .put("startOffset", i == null ? null : i.startOffset())
                .put("leaderEpoch", i == null ? null : i.leaderEpoch().orElse(null))
                .put("lag", i == null ? null : i.lag().orElse(null))
                .put("highWatermark", LagScenario.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED))
                .put("lastStableOffset", LagScenario.listOffset(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED)));
        }
        return out;
    }

    private static <V> Map<String, Map.Entry<TopicPartition, V>> byName(Map<TopicPartition, V> m) {
        Map<String, Map.Entry<TopicPartition, V>> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, V> e : m.entrySet()) {
            out.put(e.getKey().topic() + "\u0000" + String.format("%08d", e.getKey().partition()), e);
        }
        return out;
    }

    // ------------------------------------------------------------------ group configs

    /** DescribeConfigs (and, with --set, IncrementalAlterConfigs) of resource type GROUP (32). */
    void groupConfig() throws Exception {
        String group = s.req("group");
        try (Admin admin = s.admin()) {
            Map<String, String> set = LagScenario.kvList(s.opts.getOrDefault("set", ""));
            if (!set.isEmpty()) alterGroupConfig(admin, group, set);
            LagScenario.emit(new Scenario.Json().put("scenario", "group-config").put("group", group)
                .put("set", set).put("config", describeGroupConfig(admin, group)));
        }
    }

    private void alterGroupConfig(Admin admin, String group, Map<String, String> set) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
        List<AlterConfigOp> ops = new ArrayList<>();
        set.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(Map.of(r, ops)).all().get();
        // DescribeConfigs answers from the broker's metadata image: wait until it shows the values
        while (true) {
            Map<String, ConfigEntry> now = groupConfigEntries(admin, group);
            boolean all = true;
            for (Map.Entry<String, String> e : set.entrySet()) {
                ConfigEntry entry = now.get(e.getKey());
                all &= entry != null && e.getValue().equals(entry.value());
            }
            if (all) return;
            s.sleepOrFail(100, "group config " + set + " of " + group, null);
        }
    }

    private Map<String, ConfigEntry> groupConfigEntries(Admin admin, String group) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
        Config c = admin.describeConfigs(List.of(r)).all().get().get(r);
        Map<String, ConfigEntry> out = new TreeMap<>();
        for (ConfigEntry e : c.entries()) out.put(e.name(), e);
        return out;
    }

    /** Each entry of the group's config: {value, source} (DYNAMIC_GROUP_CONFIG once set, else DEFAULT_CONFIG). */
    private Map<String, Object> describeGroupConfig(Admin admin, String group) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        groupConfigEntries(admin, group).forEach((k, e) ->
            out.put(k, new Scenario.Json().put("value", e.value()).put("source", e.source().toString())));
        return out;
    }

    // ------------------------------------------------------------------ streams groups

    /**
     * A minimal Streams application (one thread, source -> foreach counting) with
     * group.protocol=streams: runs until the group's committed offset of every partition of T is
     * the end its consumer can reach (exactly_once_v2 reads read_committed: the LSO; at_least_once
     * read_uncommitted: the high watermark), then prints what the Admin API and OffsetFetch say of
     * the group while it runs, closes (the group stays, Empty, with its offsets) and prints the
     * same after.
     */
    void streamsRun() throws Exception {
        String app = s.req("application-id");
        String topic = s.req("topic");
        String guarantee = s.opts.getOrDefault("guarantee", "at_least_once");
        long start = System.nanoTime();
        Path stateDir = Files.createTempDirectory("kdp-lag-streams");
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrap);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass().getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass().getName());
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        AtomicLong processed = new AtomicLong();
        StreamsBuilder b = new StreamsBuilder();
        b.<byte[], byte[]>stream(topic).foreach((k, v) -> processed.incrementAndGet());
        IsolationLevel iso = guarantee.equals("at_least_once") ? IsolationLevel.READ_UNCOMMITTED : IsolationLevel.READ_COMMITTED;
        try (Admin admin = s.admin()) {
            // the group's first assignment waits streams.initial.rebalance.delay.ms (3 s by default)
            alterGroupConfig(admin, app, Map.of("streams.initial.rebalance.delay.ms", "0"));
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            Map<TopicPartition, Long> end = new TreeMap<>(java.util.Comparator.comparingInt(TopicPartition::partition));
            for (int i = 0; i < partitions; i++) {
                TopicPartition tp = new TopicPartition(topic, i);
                end.put(tp, LagScenario.listOffset(admin, tp, OffsetSpec.latest(), iso));
            }
            Scenario.Json running;
            KafkaStreams streams = new KafkaStreams(b.build(), p);
            try {
                streams.start();
                while (true) {
                    Map<TopicPartition, OffsetAndMetadata> got = streamsOffsets(admin, app);
                    boolean done = true;
                    for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
                        OffsetAndMetadata o = got.get(e.getKey());
                        done &= o != null && o.offset() >= e.getValue();
                    }
                    if (done) break;
                    s.sleepOrFail(200, app + " committing up to " + end + " (state " + streams.state() + ", committed " + got + ")", null);
                }
                running = groupView(admin, app, topic);
            } finally {
                streams.close(Duration.ofSeconds(20));
            }
            LagScenario.emit(new Scenario.Json()
                .put("scenario", "streams-run").put("applicationId", app).put("topic", topic)
                .put("guarantee", guarantee).put("processed", processed.get())
                .put("endOffsets", byPartition(end))
                .put("running", running)
                .put("closed", groupView(admin, app, topic))
                .put("millis", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> streamsOffsets(Admin admin, String app) throws Exception {
        try {
            Map<TopicPartition, OffsetAndMetadata> m = admin
                .listStreamsGroupOffsets(Map.of(app, new ListStreamsGroupOffsetsSpec()))
                .partitionsToOffsetAndMetadata(app).get();
            return m == null ? Map.of() : m;
        } catch (ExecutionException e) {
            return Map.of(); // not created yet
        }
    }

    /** The group as each API sees it: StreamsGroupDescribe, OffsetFetch two ways, ListGroups, ConsumerGroupDescribe. */
    private Scenario.Json groupView(Admin admin, String app, String topic) throws Exception {
        Scenario.Json j = new Scenario.Json();
        StreamsGroupDescription d = admin.describeStreamsGroups(List.of(app)).describedGroups().get(app).get();
        j.put("streamsGroupDescribe", new Scenario.Json().put("groupState", d.groupState().toString())
            .put("groupEpoch", d.groupEpoch()).put("targetAssignmentEpoch", d.targetAssignmentEpoch())
            .put("topologyEpoch", d.topologyEpoch()).put("members", d.members().size())
            .put("subtopologies", d.subtopologies().size()));
        j.put("listStreamsGroupOffsets", offsetsJson(streamsOffsets(admin, app), topic));
        // the same OffsetFetch through the consumer-group call: does the group id answer?
        try {
            j.put("listConsumerGroupOffsets", offsetsJson(
                admin.listConsumerGroupOffsets(app).partitionsToOffsetAndMetadata().get(), topic));
        } catch (ExecutionException e) {
            j.put("listConsumerGroupOffsets", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        }
        try {
            j.put("describeConsumerGroups", admin.describeConsumerGroups(List.of(app)).describedGroups().get(app).get()
                .groupState().toString());
        } catch (ExecutionException e) {
            j.put("describeConsumerGroups", e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        }
        for (GroupListing g : admin.listGroups().all().get()) {
            if (g.groupId().equals(app)) {
                j.put("listGroups", new Scenario.Json().put("type", g.type().map(Object::toString).orElse(null))
                    .put("protocol", g.protocol()).put("state", g.groupState().map(Object::toString).orElse(null)));
            }
        }
        return j;
    }

    private static Map<String, Object> offsetsJson(Map<TopicPartition, OffsetAndMetadata> m, String topic) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((tp, o) -> {
            if (tp.topic().equals(topic)) out.put(String.valueOf(tp.partition()), o == null ? null : o.offset());
        });
        return out;
    }

    private static Map<String, Object> byPartition(Map<TopicPartition, Long> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((tp, o) -> out.put(String.valueOf(tp.partition()), o));
        return out;
    }

    /** Admin.listGroups (ListGroups v5): every group's type, protocol and state. */
    void listGroups() throws Exception {
        try (Admin admin = s.admin()) {
            List<Object> rows = new ArrayList<>();
            for (GroupListing g : admin.listGroups().all().get()) {
                rows.add(new Scenario.Json().put("groupId", g.groupId())
                    .put("type", g.type().map(Object::toString).orElse(null))
                    .put("protocol", g.protocol())
                    .put("state", g.groupState().map(Object::toString).orElse(null)));
            }
            LagScenario.emit(new Scenario.Json().put("scenario", "list-groups").put("groups", rows));
        }
    }
}
