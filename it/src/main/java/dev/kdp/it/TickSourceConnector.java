package dev.kdp.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * A tiny source connector for ConnectWorker: each task writes "tick" records (one per poll,
 * every poll.ms, default 500) to topic, with a source offset per task, so that an exactly-once
 * worker opens and commits a transaction for it (transaction.boundary=poll, Connect's default).
 * It declares exactly-once support (KIP-618), so exactly.once.support=required is accepted.
 */
public final class TickSourceConnector extends SourceConnector {
    private Map<String, String> props;

    @Override public void start(Map<String, String> props) { this.props = props; }

    @Override public Class<? extends Task> taskClass() { return TickTask.class; }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> out = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) {
            Map<String, String> c = new java.util.HashMap<>(props);
            c.put("task.index", Integer.toString(i));
            out.add(c);
        }
        return out;
    }

    @Override public void stop() {}

    @Override
    public ConfigDef config() {
        return new ConfigDef()
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "topic to write to")
            .define("poll.ms", ConfigDef.Type.LONG, 500L, ConfigDef.Importance.LOW, "pause between records");
    }

    @Override public String version() { return "1"; }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    /** One record per poll; its source offset is the count so far. */
    public static final class TickTask extends SourceTask {
        private String topic;
        private String index;
        private long pollMs;
        private long n;

        @Override
        public void start(Map<String, String> props) {
            topic = props.get("topic");
            index = props.get("task.index");
            pollMs = Long.parseLong(props.getOrDefault("poll.ms", "500"));
            Map<String, Object> offset = context.offsetStorageReader().offset(Map.of("task", index));
            n = offset == null ? 0 : ((Number) offset.get("n")).longValue();
        }

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            Thread.sleep(pollMs);
            n++;
            return List.of(new SourceRecord(Map.of("task", index), Map.of("n", n), topic, null,
                Schema.STRING_SCHEMA, "task-" + index, Schema.STRING_SCHEMA, "tick-" + n));
        }

        @Override public void stop() {}

        @Override public String version() { return "1"; }
    }
}
