package dev.kdp.it;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * DescribeGroups (v4) sent as it is on the wire, encoded and decoded by Kafka's own generated
 * classes, to every broker until the group's coordinator answers: the raw member metadata and
 * assignment bytes of any classic group (Admin.describeConsumerGroups refuses a group whose
 * protocol type is not "consumer", e.g. Connect's "connect"), exactly as kdp receives them.
 * Plaintext only (the test cluster's listener).
 */
final class DescribeGroupsRaw {
    private static final short VERSION = 4; // the newest non-flexible version: request header v1, response header v0

    private DescribeGroupsRaw() {}

    /** The described group from its coordinator; CoordinatorNotAvailableException (retriable) while no broker is (yet) its coordinator. */
    static DescribeGroupsResponseData.DescribedGroup describe(List<InetSocketAddress> brokers, String groupId) throws IOException {
        Errors last = Errors.NONE;
        for (InetSocketAddress broker : brokers) {
            DescribeGroupsResponseData.DescribedGroup g = describeAt(broker, groupId);
            Errors e = Errors.forCode(g.errorCode());
            if (e == Errors.NONE) {
                return g;
            }
            if (e != Errors.NOT_COORDINATOR && e != Errors.COORDINATOR_LOAD_IN_PROGRESS && e != Errors.COORDINATOR_NOT_AVAILABLE) {
                throw e.exception("DescribeGroups " + groupId + " at " + broker);
            }
            last = e;
        }
        throw Errors.COORDINATOR_NOT_AVAILABLE.exception("no broker answered DescribeGroups for " + groupId + " as its coordinator (last: " + last + ")");
    }

    private static DescribeGroupsResponseData.DescribedGroup describeAt(InetSocketAddress broker, String groupId) throws IOException {
        DescribeGroupsRequest request = new DescribeGroupsRequest.Builder(
            new DescribeGroupsRequestData().setGroups(List.of(groupId)).setIncludeAuthorizedOperations(false)).build(VERSION);
        int correlationId = 7;
        ByteBuffer frame = request.serializeWithHeader(new RequestHeader(ApiKeys.DESCRIBE_GROUPS, VERSION, "kdp-it-owners", correlationId));
        try (Socket s = new Socket()) {
            s.connect(broker, 10_000);
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            byte[] body = new byte[frame.remaining()];
            frame.get(body);
            out.writeInt(body.length);
            out.write(body);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            int size = in.readInt();
            if (size < 4 || size > 64 << 20) {
                throw new IOException("DescribeGroups response size " + size + " from " + broker);
            }
            byte[] resp = new byte[size];
            in.readFully(resp);
            ByteBuffer buf = ByteBuffer.wrap(resp);
            int gotCorrelation = buf.getInt(); // response header v0: the correlation id only
            if (gotCorrelation != correlationId) {
                throw new IOException("correlation id " + gotCorrelation + " != " + correlationId);
            }
            DescribeGroupsResponseData data = new DescribeGroupsResponseData(new ByteBufferAccessor(buf), VERSION);
            if (data.groups().size() != 1) {
                throw new IOException("DescribeGroups answered " + data.groups().size() + " groups");
            }
            return data.groups().get(0);
        }
    }
}
