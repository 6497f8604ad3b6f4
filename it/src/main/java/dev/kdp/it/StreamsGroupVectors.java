package dev.kdp.it;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.message.StreamsGroupDescribeRequestData;
import org.apache.kafka.common.message.StreamsGroupDescribeResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/**
 * Golden vectors for kdp's StreamsGroupDescribe (API 89) declaration, encoded by Kafka's own
 * generated classes (the `kafka-protocol` crate, kdp's other peer, does not know the API).
 * Compiled for 4.x only (the 3.x profile of pom.xml excludes it).
 *
 * <p>Usage: {@code java -cp "$KDP_IT_CLASSPATH" dev.kdp.it.StreamsGroupVectors}. Prints one
 * JSON document on stdout: `vectors/streams-group-describe/kafka-<version>.json`.
 */
public final class StreamsGroupVectors {

    private StreamsGroupVectors() {}

    private static String hex(ApiMessage m, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        ByteBuffer buf = ByteBuffer.allocate(m.size(cache, version));
        m.write(new ByteBufferAccessor(buf), cache, version);
        return HexFormat.of().formatHex(buf.array());
    }

    private static StreamsGroupDescribeResponseData.TaskIds tasks(String sub, Integer... partitions) {
        return new StreamsGroupDescribeResponseData.TaskIds().setSubtopologyId(sub).setPartitions(List.of(partitions));
    }

    public static void main(String[] args) {
        StreamsGroupDescribeRequestData request = new StreamsGroupDescribeRequestData()
            .setGroupIds(List.of("orders-app", "gone"))
            .setIncludeAuthorizedOperations(true);

        StreamsGroupDescribeResponseData.KeyValue config = new StreamsGroupDescribeResponseData.KeyValue()
            .setKey("cleanup.policy").setValue("compact");
        StreamsGroupDescribeResponseData.Subtopology sub = new StreamsGroupDescribeResponseData.Subtopology()
            .setSubtopologyId("0")
            .setSourceTopics(List.of("orders"))
            .setRepartitionSinkTopics(List.of())
            .setStateChangelogTopics(List.of(new StreamsGroupDescribeResponseData.TopicInfo()
                .setName("orders-app-store-changelog").setPartitions(0).setReplicationFactor((short) 3)
                .setTopicConfigs(List.of(config))))
            .setRepartitionSourceTopics(List.of());
        StreamsGroupDescribeResponseData.Member live = new StreamsGroupDescribeResponseData.Member()
            .setMemberId("m-1").setMemberEpoch(7).setInstanceId(null).setRackId("r1")
            .setClientId("orders-app-5f1c2b7e-9a4d-4c3e-8b6f-0123456789ab-StreamThread-1-consumer")
            .setClientHost("/127.0.0.1").setTopologyEpoch(0)
            .setProcessId("5f1c2b7e-9a4d-4c3e-8b6f-0123456789ab")
            .setUserEndpoint(new StreamsGroupDescribeResponseData.Endpoint().setHost("app-1").setPort(65535))
            .setClientTags(List.of(new StreamsGroupDescribeResponseData.KeyValue().setKey("zone").setValue("a")))
            .setTaskOffsets(List.of(new StreamsGroupDescribeResponseData.TaskOffset()
                .setSubtopologyId("0").setPartition(1).setOffset(42L)))
            .setTaskEndOffsets(List.of())
            .setAssignment(new StreamsGroupDescribeResponseData.Assignment()
                .setActiveTasks(List.of(tasks("0", 0, 1))).setStandbyTasks(List.of(tasks("0", 2)))
                .setWarmupTasks(List.of()))
            .setTargetAssignment(new StreamsGroupDescribeResponseData.Assignment()
                .setActiveTasks(List.of(tasks("0", 0, 1, 2))).setStandbyTasks(List.of()).setWarmupTasks(List.of()))
            .setIsClassic(false);
        StreamsGroupDescribeResponseData.Member noEndpoint = new StreamsGroupDescribeResponseData.Member()
            .setMemberId("m-2").setMemberEpoch(7).setInstanceId("static-2").setRackId(null)
            .setClientId("orders-app-c0ffee00-0000-4000-8000-000000000002-StreamThread-1-consumer")
            .setClientHost("/127.0.0.2").setTopologyEpoch(0)
            .setProcessId("c0ffee00-0000-4000-8000-000000000002")
            .setUserEndpoint(null)
            .setClientTags(List.of()).setTaskOffsets(List.of()).setTaskEndOffsets(List.of())
            .setAssignment(new StreamsGroupDescribeResponseData.Assignment()
                .setActiveTasks(List.of(tasks("0", 2))).setStandbyTasks(List.of()).setWarmupTasks(List.of()))
            .setTargetAssignment(new StreamsGroupDescribeResponseData.Assignment()
                .setActiveTasks(List.of()).setStandbyTasks(List.of()).setWarmupTasks(List.of()))
            .setIsClassic(true);
        StreamsGroupDescribeResponseData response = new StreamsGroupDescribeResponseData()
            .setThrottleTimeMs(0)
            .setGroups(List.of(
                new StreamsGroupDescribeResponseData.DescribedGroup()
                    .setErrorCode((short) 0).setErrorMessage(null).setGroupId("orders-app")
                    .setGroupState("Stable").setGroupEpoch(7).setAssignmentEpoch(7)
                    .setTopology(new StreamsGroupDescribeResponseData.Topology().setEpoch(0)
                        .setSubtopologies(List.of(sub)))
                    .setMembers(List.of(live, noEndpoint))
                    .setAuthorizedOperations(1234),
                new StreamsGroupDescribeResponseData.DescribedGroup()
                    .setErrorCode((short) 69).setErrorMessage("Group gone not found.").setGroupId("gone")
                    .setGroupState("").setGroupEpoch(-1).setAssignmentEpoch(-1)
                    .setTopology(null).setMembers(List.of())));

        String version = org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
        System.out.println("{");
        System.out.println("  \"kafka_version\": \"" + version + "\",");
        System.out.println("  \"request_v0\": \"" + hex(request, (short) 0) + "\",");
        System.out.println("  \"response_v0\": \"" + hex(response, (short) 0) + "\"");
        System.out.println("}");
    }
}
