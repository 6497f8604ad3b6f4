package dev.kdp.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;

/**
 * A real distributed Kafka Connect worker (Kafka's own ConnectDistributed, in this JVM) with
 * exactly.once.source.support=enabled, REST on 127.0.0.1; with --connector it also puts a
 * {@link TickSourceConnector} (PUT /connectors/NAME/config: idempotent, any worker may do it).
 *
 * <p>stdout, one JSON object per line:
 * <ul>
 *   <li>{"event":"worker","pid","kafkaVersion","groupId","workerId","restUrl","clientId","leaderTransactionalId"}:
 *       workerId is the advertised host:port, clientId the group member's ("connect-" + workerId, Connect's default),
 *       leaderTransactionalId the id the group's leader writes the config topic with (DistributedConfig.transactionalProducerId)
 *   <li>{"event":"connector","name","state","workerId","tasks":[{"task","state","workerId","transactionalId"}]}:
 *       each time GET /connectors/NAME/status changes; transactionalId from Worker.taskTransactionalId
 *   <li>{"event":"stopped"} after SIGTERM (Connect.stop)
 * </ul>
 */
public final class ConnectWorker {
    private static final String USAGE = String.join("\n",
        "usage: java -cp \"$KDP_IT_CLASSPATH\" dev.kdp.it.ConnectWorker --bootstrap B --group-id G",
        "       [--rest-port P] [--connector NAME --topic T [--tasks N] [--poll-ms MS]]",
        "       [--rebalance-delay-ms MS] [--transaction-timeout-ms MS]",
        "A distributed worker of group G (internal topics G-configs, G-offsets, G-status) with exactly-once",
        "source support; JSON lines on stdout (see the class comment), logs on stderr.",
        "--rebalance-delay-ms: scheduled.rebalance.max.delay.ms (Connect's default 300000), how long a lost",
        "worker's tasks wait before they are reassigned.");

    private ConnectWorker() {}

    public static void main(String[] args) throws Exception {
        Harness h = new Harness("ConnectWorker", args, USAGE);
        String group = h.req("group-id");
        int port = h.has("rest-port") ? h.intOpt("rest-port", 0) : Harness.freeLoopbackPort();
        Map<String, String> w = new HashMap<>();
        w.put("bootstrap.servers", h.req("bootstrap"));
        w.put("group.id", group);
        w.put("config.storage.topic", group + "-configs");
        w.put("offset.storage.topic", group + "-offsets");
        w.put("status.storage.topic", group + "-status");
        w.put("offset.storage.partitions", "3"); // Connect's default 25 is a lot for a test cluster
        w.put("status.storage.partitions", "1");
        w.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("value.converter", "org.apache.kafka.connect.storage.StringConverter");
        w.put("listeners", "http://127.0.0.1:" + port);
        w.put("rest.advertised.host.name", "127.0.0.1");
        w.put("rest.advertised.port", Integer.toString(port));
        w.put("exactly.once.source.support", "enabled");
        // our connector is listed in META-INF/services, Kafka's plugins too: no class-path scan
        w.put("plugin.discovery", "service_load");
        w.put("offset.flush.interval.ms", "1000");
        if (h.has("rebalance-delay-ms")) {
            w.put("scheduled.rebalance.max.delay.ms", h.req("rebalance-delay-ms"));
        }
        if (h.has("transaction-timeout-ms")) {
            // worker-level producer override: every task producer's transaction.timeout.ms
            w.put("producer.transaction.timeout.ms", h.req("transaction-timeout-ms"));
        }

        Connect<?> connect = new ConnectDistributed().startConnect(w);
        String workerId = "127.0.0.1:" + port;
        String restUrl = connect.rest().advertisedUrl().toString();
        Harness.emit("worker", "pid", Harness.pid(), "kafkaVersion", Harness.kafkaVersion(), "groupId", group,
            "workerId", workerId, "restUrl", restUrl, "clientId", "connect-" + workerId,
            "leaderTransactionalId", DistributedConfig.transactionalProducerId(group));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            connect.stop();
            connect.awaitStop();
            Harness.emit("stopped");
        }, "kdp-connect-shutdown"));

        if (!h.has("connector")) {
            connect.awaitStop();
            return;
        }
        String name = h.req("connector");
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        ObjectMapper json = new ObjectMapper();
        Map<String, String> cfg = new HashMap<>();
        cfg.put("connector.class", TickSourceConnector.class.getName());
        cfg.put("tasks.max", h.opt("tasks", "1"));
        cfg.put("topic", h.req("topic"));
        cfg.put("poll.ms", h.opt("poll-ms", "500"));
        cfg.put("exactly.once.support", "required");
        URI base = URI.create(restUrl.endsWith("/") ? restUrl : restUrl + "/");
        putConfig(http, json, base.resolve("connectors/" + name + "/config"), cfg, h);

        String last = "";
        while (true) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("connectors/" + name + "/status"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200 && !r.body().equals(last)) {
                last = r.body();
                JsonNode st = json.readTree(last);
                List<Scenario.Json> tasks = new ArrayList<>();
                for (JsonNode t : st.path("tasks")) {
                    int id = t.path("id").asInt();
                    tasks.add(new Scenario.Json().put("task", id).put("state", t.path("state").asText())
                        .put("workerId", t.path("worker_id").asText())
                        .put("transactionalId", Worker.taskTransactionalId(group, name, id)));
                }
                Harness.emit("connector", "name", name, "state", st.path("connector").path("state").asText(),
                    "workerId", st.path("connector").path("worker_id").asText(), "tasks", tasks);
            }
            Thread.sleep(1000);
        }
    }

    /** PUT the config, retrying while the worker has not joined its group yet (409/5xx). */
    private static void putConfig(HttpClient http, ObjectMapper json, URI uri, Map<String, String> cfg, Harness h) throws Exception {
        String body = json.writeValueAsString(cfg);
        for (int attempt = 0; ; attempt++) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200 || r.statusCode() == 201) {
                return;
            }
            if (attempt >= 60 || (r.statusCode() < 500 && r.statusCode() != 409)) {
                throw new IllegalStateException("PUT " + uri + ": " + r.statusCode() + " " + r.body());
            }
            h.log("PUT " + uri + ": " + r.statusCode() + ", retrying");
            Thread.sleep(1000);
        }
    }
}
