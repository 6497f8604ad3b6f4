package dev.kdp.it;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;

/**
 * Golden vectors for kdp's TransactionLogKey/TransactionLogValue codec and for the
 * `__transaction_state` partition rule, made by Kafka's own classes (the generated
 * message classes, MessageUtil.toVersionPrefixedBytes, Utils.abs, String.hashCode).
 *
 * <p>Usage: {@code java -cp "$KDP_IT_CLASSPATH" dev.kdp.it.TxnLogVectors}. Prints one JSON
 * document on stdout. Tagged fields this Kafka version's schema lacks (3.9 has none) are
 * skipped, and the document says which version made it.
 */
public final class TxnLogVectors {

    private TxnLogVectors() {}

    /** One value: fields in the order of kdp's declaration. */
    private static final class Spec {
        final String name;
        final short version;
        final long producerId;
        final long previousProducerId;
        final long nextProducerId;
        final short producerEpoch;
        final short nextProducerEpoch;
        final int timeoutMs;
        final byte status;
        final Object[][] partitions; // null, or {topic, int[]}
        final long lastUpdate;
        final long start;
        final short clientTv;

        Spec(String name, short version, long producerId, long previousProducerId, long nextProducerId,
             short producerEpoch, short nextProducerEpoch, int timeoutMs, byte status, Object[][] partitions,
             long lastUpdate, long start, short clientTv) {
            this.name = name;
            this.version = version;
            this.producerId = producerId;
            this.previousProducerId = previousProducerId;
            this.nextProducerId = nextProducerId;
            this.producerEpoch = producerEpoch;
            this.nextProducerEpoch = nextProducerEpoch;
            this.timeoutMs = timeoutMs;
            this.status = status;
            this.partitions = partitions;
            this.lastUpdate = lastUpdate;
            this.start = start;
            this.clientTv = clientTv;
        }
    }

    public static void main(String[] args) throws Exception {
        List<Spec> specs = new ArrayList<>();
        Object[][] two = {{"orders", new int[] {0, 3}}, {"payments", new int[] {7}}};
        Object[][] empty = {};
        specs.add(new Spec("v0-empty", (short) 0, 1000, -1, -1, (short) 0, (short) -1, 60000, (byte) 0, null,
            1796287460449L, -1, (short) 0));
        specs.add(new Spec("v0-ongoing", (short) 0, 1000, -1, -1, (short) 5, (short) -1, 60000, (byte) 1, two,
            1796287461078L, 1796287461078L, (short) 0));
        specs.add(new Spec("v0-complete-commit", (short) 0, Long.MAX_VALUE, -1, -1, Short.MAX_VALUE, (short) -1,
            Integer.MAX_VALUE, (byte) 4, empty, 1796287461395L, 1796287461078L, (short) 0));
        specs.add(new Spec("v1-empty-defaults", (short) 1, 0, -1, -1, (short) 0, (short) -1, 3600000, (byte) 0,
            null, 1796287460449L, -1, (short) 0));
        specs.add(new Spec("v1-empty-4x", (short) 1, 1001, 1001, -1, (short) 2, (short) -1, 30000, (byte) 0, null,
            1796287530427L, -1, (short) 2));
        specs.add(new Spec("v1-prepare-commit-tv2", (short) 1, 1000, 1000, -1, (short) 1, (short) -1, 3600000,
            (byte) 2, two, 1796287477174L, 1796287477113L, (short) 2));
        specs.add(new Spec("v1-rollover", (short) 1, 4000, 4000, 5001, Short.MAX_VALUE, (short) 0, 60000, (byte) 2,
            two, 1796287477174L, 1796287477113L, (short) 2));
        specs.add(new Spec("v1-prepare-abort-timeout", (short) 1, 2, 2, -1, (short) 1, (short) -1, 2000, (byte) 3,
            new Object[][] {{"t", new int[] {2}}}, 1796287497157L, 1796287488127L, (short) 2));
        specs.add(new Spec("v1-unicode-topic", (short) 1, 7, -1, -1, (short) 3, (short) -1, 60000, (byte) 5,
            new Object[][] {{"zahlungen-\u20ac-\uD83D\uDE00", new int[] {}}}, 1L, 0L, (short) 0));

        StringBuilder out = new StringBuilder();
        out.append("{\"kafkaVersion\":\"").append(kafkaVersion()).append("\",\"values\":[");
        boolean first = true;
        for (Spec s : specs) {
            TransactionLogValue v = new TransactionLogValue()
                .setProducerId(s.producerId)
                .setProducerEpoch(s.producerEpoch)
                .setTransactionTimeoutMs(s.timeoutMs)
                .setTransactionStatus(s.status)
                .setTransactionLastUpdateTimestampMs(s.lastUpdate)
                .setTransactionStartTimestampMs(s.start);
            boolean tagged = s.previousProducerId != -1 || s.nextProducerId != -1 || s.clientTv != 0
                || s.nextProducerEpoch != -1;
            boolean taggedSet = setIfPresent(v, "setPreviousProducerId", long.class, s.previousProducerId, -1L)
                & setIfPresent(v, "setNextProducerId", long.class, s.nextProducerId, -1L)
                & setIfPresent(v, "setNextProducerEpoch", short.class, s.nextProducerEpoch, (short) -1)
                & setIfPresent(v, "setClientTransactionVersion", short.class, s.clientTv, (short) 0);
            if (tagged && !taggedSet) {
                continue; // this Kafka version's schema cannot carry the vector
            }
            if (s.partitions == null) {
                v.setTransactionPartitions(null);
            } else {
                List<TransactionLogValue.PartitionsSchema> parts = new ArrayList<>();
                for (Object[] p : s.partitions) {
                    List<Integer> ids = new ArrayList<>();
                    for (int id : (int[]) p[1]) {
                        ids.add(id);
                    }
                    parts.add(new TransactionLogValue.PartitionsSchema().setTopic((String) p[0]).setPartitionIds(ids));
                }
                v.setTransactionPartitions(parts);
            }
            byte[] bytes = MessageUtil.toVersionPrefixedBytes(s.version, v);
            out.append(first ? "" : ",").append("{\"name\":\"").append(s.name).append("\",\"hex\":\"")
                .append(hex(bytes)).append("\"}");
            first = false;
        }
        out.append("],\"keys\":[");
        String[] ids = {"", "tx", "orders-writer-7", "zahlungen-\u20ac", "\uD83D\uDE00-instance", "polygenelubricants",
            "GydZG_", "a-much-longer-transactional-id-with-many-characters-0123456789"};
        first = true;
        for (String id : ids) {
            byte[] bytes = MessageUtil.toVersionPrefixedBytes((short) 0, new TransactionLogKey().setTransactionalId(id));
            out.append(first ? "" : ",").append("{\"id\":").append(json(id)).append(",\"hex\":\"").append(hex(bytes))
                .append("\"}");
            first = false;
        }
        out.append("],\"partitions\":[");
        String[] more = {"fa", "tp", "to", "tt", "tf", "ledger-4", "kdp-history-fenced", "\uDBFF\uDFFF", "Aa", "BB"};
        List<String> all = new ArrayList<>(Arrays.asList(ids));
        all.addAll(Arrays.asList(more));
        int[] counts = {1, 3, 5, 7, 50, 64, 2147483647};
        first = true;
        for (String id : all) {
            out.append(first ? "" : ",").append("{\"id\":").append(json(id)).append(",\"hashCode\":")
                .append(id.hashCode()).append(",\"partitions\":{");
            boolean f2 = true;
            for (int n : counts) {
                out.append(f2 ? "" : ",").append('"').append(n).append("\":").append(Utils.abs(id.hashCode()) % n);
                f2 = false;
            }
            out.append("}}");
            first = false;
        }
        out.append("]}");
        System.out.println(out);
    }

    /** AppInfoParser.getVersion(), in common.utils (3.9) or common.utils.internals (4.x). */
    private static String kafkaVersion() throws Exception {
        for (String c : new String[] {"org.apache.kafka.common.utils.internals.AppInfoParser",
            "org.apache.kafka.common.utils.AppInfoParser"}) {
            try {
                return (String) Class.forName(c).getMethod("getVersion").invoke(null);
            } catch (ClassNotFoundException e) {
                // the other generation
            }
        }
        return "unknown";
    }

    /** Calls the setter if this Kafka's class has it; without it, only the default can be carried. */
    private static boolean setIfPresent(Object target, String setter, Class<?> type, Object value, Object dflt)
            throws Exception {
        Method m;
        try {
            m = target.getClass().getMethod(setter, type);
        } catch (NoSuchMethodException e) {
            return value.equals(dflt);
        }
        m.invoke(target, value);
        return true;
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    /** JSON string with every non-ASCII UTF-16 unit escaped. */
    private static String json(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
