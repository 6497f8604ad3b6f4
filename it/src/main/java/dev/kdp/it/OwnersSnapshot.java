package dev.kdp.it;

import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.connect.runtime.distributed.ConnectProtocol;
import org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeConnectProtocol;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;

/**
 * What kdp sees of the owners of some transactional ids, as one JSON document on stdout: the
 * transactions (ListTransactions + DescribeTransactions, ids starting with one of --id-prefix), the
 * classic groups (DescribeGroups on the wire: member ids, client ids, hosts and the raw member
 * metadata and assignment bytes in hex, plus what Kafka's own decoders read from them: the
 * Streams process id of a "stream" member, the url of a Connect worker) and, on Kafka 4.1+, the
 * KIP-1071 streams groups (Admin.describeStreamsGroups: process id, client id, active tasks).
 * vectors/owners/*.json hold these snapshots; scripts/owners-vectors.sh makes them.
 */
public final class OwnersSnapshot {
    private static final String USAGE = String.join("\n",
        "usage: java -cp \"$KDP_IT_CLASSPATH\" dev.kdp.it.OwnersSnapshot --bootstrap B [--id-prefix P1,P2]",
        "       [--classic-groups G1,G2] [--streams-groups G1,G2]");

    private OwnersSnapshot() {}

    public static void main(String[] args) throws Exception {
        Harness h = new Harness("OwnersSnapshot", args, USAGE);
        String bootstrap = h.req("bootstrap");
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Scenario.Json doc = new Scenario.Json().put("kafkaVersion", Harness.kafkaVersion());
        try (Admin admin = Admin.create(p)) {
            doc.put("transactions", transactions(admin, list(h.opt("id-prefix", ""))));
            List<InetSocketAddress> brokers = Arrays.stream(bootstrap.split(","))
                .map(s -> new InetSocketAddress(s.substring(0, s.lastIndexOf(':')), Integer.parseInt(s.substring(s.lastIndexOf(':') + 1))))
                .collect(Collectors.toList());
            List<Scenario.Json> classic = new ArrayList<>();
            for (String g : list(h.opt("classic-groups", ""))) {
                classic.add(classicGroup(DescribeGroupsRaw.describe(brokers, g)));
            }
            doc.put("classicGroups", classic);
            List<Scenario.Json> streams = new ArrayList<>();
            List<String> sg = list(h.opt("streams-groups", ""));
            if (!sg.isEmpty()) {
                streams.addAll(streamsGroups(admin, sg));
            }
            doc.put("streamsGroups", streams);
        }
        System.out.println(doc);
    }

    private static List<String> list(String csv) {
        return csv.isEmpty() ? List.of() : Arrays.asList(csv.split(","));
    }

    private static List<Scenario.Json> transactions(Admin admin, List<String> prefixes) throws Exception {
        List<String> ids = admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream()
            .map(TransactionListing::transactionalId)
            .filter(id -> prefixes.isEmpty() || prefixes.stream().anyMatch(id::startsWith)).sorted().collect(Collectors.toList());
        Map<String, TransactionDescription> d = ids.isEmpty() ? Map.of() : admin.describeTransactions(ids).all().get(30, TimeUnit.SECONDS);
        List<Scenario.Json> out = new ArrayList<>();
        for (String id : ids) {
            TransactionDescription t = d.get(id);
            out.add(new Scenario.Json().put("transactionalId", id).put("coordinatorId", t.coordinatorId())
                .put("state", t.state().toString()).put("producerId", t.producerId()).put("producerEpoch", t.producerEpoch())
                .put("transactionTimeoutMs", t.transactionTimeoutMs())
                .put("transactionStartTimeMs", t.transactionStartTimeMs().orElse(-1L))
                .put("topicPartitions", t.topicPartitions().stream().map(Object::toString).sorted().collect(Collectors.toList())));
        }
        return out;
    }

    private static Scenario.Json classicGroup(DescribeGroupsResponseData.DescribedGroup g) {
        List<Scenario.Json> members = new ArrayList<>();
        List<DescribeGroupsResponseData.DescribedGroupMember> sorted = new ArrayList<>(g.members());
        sorted.sort(Comparator.comparing(DescribeGroupsResponseData.DescribedGroupMember::clientId));
        for (DescribeGroupsResponseData.DescribedGroupMember m : sorted) {
            members.add(new Scenario.Json().put("memberId", m.memberId()).put("groupInstanceId", m.groupInstanceId())
                .put("clientId", m.clientId()).put("clientHost", m.clientHost())
                .put("metadataHex", HexFormat.of().formatHex(m.memberMetadata()))
                .put("assignmentHex", HexFormat.of().formatHex(m.memberAssignment()))
                .put("decoded", decode(g.protocolType(), g.protocolData(), m.memberMetadata())));
        }
        return new Scenario.Json().put("groupId", g.groupId()).put("groupState", g.groupState())
            .put("protocolType", g.protocolType()).put("protocol", g.protocolData()).put("members", members);
    }

    /** Kafka's own decoders on the member metadata: what a Rust parser must read the same way. */
    private static Scenario.Json decode(String protocolType, String protocol, byte[] metadata) {
        Scenario.Json out = new Scenario.Json();
        try {
            if (protocolType.equals("consumer")) {
                ConsumerPartitionAssignor.Subscription s = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata));
                out.put("topics", s.topics());
                if (protocol.equals("stream") && s.userData() != null) {
                    SubscriptionInfo info = SubscriptionInfo.decode(s.userData());
                    out.put("streamsSubscriptionVersion", info.version()).put("processId", info.processId().toString());
                }
            } else if (protocolType.equals("connect")) {
                ConnectProtocol.WorkerState w = protocol.equals("default")
                    ? ConnectProtocol.deserializeMetadata(ByteBuffer.wrap(metadata))
                    : IncrementalCooperativeConnectProtocol.deserializeMetadata(ByteBuffer.wrap(metadata));
                out.put("url", w.url()).put("configOffset", w.offset());
            }
        } catch (RuntimeException e) {
            out.put("decodeError", e.toString());
        }
        return out;
    }

    /** Admin.describeStreamsGroups (Kafka 4.1+), by reflection so that this file compiles against 3.9 too. */
    private static List<Scenario.Json> streamsGroups(Admin admin, List<String> groups) throws Exception {
        Method describe = Admin.class.getMethod("describeStreamsGroups", Collection.class);
        Object result = describe.invoke(admin, groups);
        Object future = result.getClass().getMethod("all").invoke(result);
        Map<?, ?> all = (Map<?, ?>) ((org.apache.kafka.common.KafkaFuture<?>) future).get(30, TimeUnit.SECONDS);
        List<Scenario.Json> out = new ArrayList<>();
        for (String g : groups) {
            Object d = all.get(g);
            List<Scenario.Json> members = new ArrayList<>();
            for (Object m : (Collection<?>) call(d, "members")) {
                List<Scenario.Json> active = new ArrayList<>();
                for (Object t : (Collection<?>) call(call(m, "assignment"), "activeTasks")) {
                    active.add(new Scenario.Json().put("subtopologyId", call(t, "subtopologyId")).put("partitions", call(t, "partitions")));
                }
                members.add(new Scenario.Json().put("memberId", call(m, "memberId")).put("memberEpoch", call(m, "memberEpoch"))
                    .put("clientId", call(m, "clientId")).put("clientHost", call(m, "clientHost"))
                    .put("processId", call(m, "processId")).put("isClassic", call(m, "isClassic")).put("activeTasks", active));
            }
            members.sort(Comparator.comparing(Object::toString));
            out.add(new Scenario.Json().put("groupId", g).put("groupState", String.valueOf(call(d, "groupState")))
                .put("groupEpoch", call(d, "groupEpoch")).put("members", members));
        }
        return out;
    }

    private static Object call(Object o, String method) throws Exception {
        Method m = o.getClass().getMethod(method);
        m.setAccessible(true);
        return m.invoke(o);
    }
}
