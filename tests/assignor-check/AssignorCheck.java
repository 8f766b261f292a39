// Java's own assignors on groups a test describes, so Mooring's assignors can be checked against
// them (crates/group/tests/assignor_java.rs compiles this file with javac against the
// kafka-clients jar scripts/kafka fetches, runs it once and compares every group).
//
// Input, one group per line (JSON):
//   {"brokers": [{"id": 1, "rack": "rack-a"}, {"id": 2, "rack": null}],
//    "topics": [{"name": "t0", "replicas": [[1, 2], [2]]}],          (replica broker ids per partition)
//    "members": [{"id": "consumer-1", "instance": null,
//                 "subscriptions": {"range": "<base64 Subscription>", ...}}]}   (JoinGroup order)
// Output, one line per group: {"<assignor>": {"<member>": [["t0", 0], ...], ...}, ...}, or
// {"<assignor>": {"error": "<exception>"}} when the assignor throws.
//
// The leader's side is built as Java's ConsumerCoordinator builds it: the cluster from a Metadata
// response (MetadataResponse.buildCluster, so a replica on a broker the response does not list
// has no rack), every Subscription decoded with ConsumerProtocol from the bytes a member sent,
// its group.instance.id set, all put into a new HashMap in JoinGroup order; a fresh assignor per
// group.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.requests.MetadataResponse;

public final class AssignorCheck {
    private static final Map<String, Supplier<ConsumerPartitionAssignor>> ASSIGNORS = new LinkedHashMap<>();

    static {
        ASSIGNORS.put("range", RangeAssignor::new);
        ASSIGNORS.put("roundrobin", RoundRobinAssignor::new);
        ASSIGNORS.put("sticky", StickyAssignor::new);
        ASSIGNORS.put("cooperative-sticky", CooperativeStickyAssignor::new);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank())
                continue;
            out.append(check(asMap(new Json(line).value()))).append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }

    private static String check(Map<String, Object> group) {
        Cluster cluster = cluster(group);
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Supplier<ConsumerPartitionAssignor>> a : ASSIGNORS.entrySet()) {
            if (out.length() > 1)
                out.append(',');
            out.append(quote(a.getKey())).append(':');
            Map<String, Subscription> subscriptions = new HashMap<>();
            for (Object o : asList(group.get("members"))) {
                Map<String, Object> member = asMap(o);
                String bytes = (String) asMap(member.get("subscriptions")).get(a.getKey());
                Subscription s = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(Base64.getDecoder().decode(bytes)));
                s.setGroupInstanceId(Optional.ofNullable((String) member.get("instance")));
                subscriptions.put((String) member.get("id"), s);
            }
            try {
                Map<String, ConsumerPartitionAssignor.Assignment> result =
                    a.getValue().get().assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
                out.append(assignments(result));
            } catch (RuntimeException e) {
                out.append("{\"error\":").append(quote(e.toString())).append('}');
            }
        }
        return out.append('}').toString();
    }

    private static Cluster cluster(Map<String, Object> group) {
        MetadataResponseData data = new MetadataResponseData().setClusterId("assignor-check");
        for (Object o : asList(group.get("brokers"))) {
            Map<String, Object> b = asMap(o);
            int id = ((Long) b.get("id")).intValue();
            data.brokers().add(new MetadataResponseData.MetadataResponseBroker()
                .setNodeId(id).setHost("broker-" + id).setPort(9092).setRack((String) b.get("rack")));
        }
        for (Object o : asList(group.get("topics"))) {
            Map<String, Object> t = asMap(o);
            MetadataResponseData.MetadataResponseTopic topic =
                new MetadataResponseData.MetadataResponseTopic().setName((String) t.get("name"));
            int index = 0;
            for (Object r : asList(t.get("replicas"))) {
                List<Integer> replicas = new ArrayList<>();
                for (Object id : asList(r))
                    replicas.add(((Long) id).intValue());
                topic.partitions().add(new MetadataResponseData.MetadataResponsePartition()
                    .setPartitionIndex(index++).setLeaderId(replicas.isEmpty() ? -1 : replicas.get(0))
                    .setReplicaNodes(replicas).setIsrNodes(replicas));
            }
            data.topics().add(topic);
        }
        return new MetadataResponse(data, (short) 12).buildCluster();
    }

    private static String assignments(Map<String, ConsumerPartitionAssignor.Assignment> result) {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, ConsumerPartitionAssignor.Assignment> e : new TreeMap<>(result).entrySet()) {
            if (out.length() > 1)
                out.append(',');
            StringBuilder list = new StringBuilder("[");
            for (TopicPartition tp : e.getValue().partitions()) {
                if (list.length() > 1)
                    list.append(',');
                list.append('[').append(quote(tp.topic())).append(',').append(tp.partition()).append(']');
            }
            out.append(quote(e.getKey())).append(':').append(list).append(']');
        }
        return out.append('}').toString();
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                out.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e)
                out.append(String.format("\\u%04x", (int) c));
            else
                out.append(c);
        }
        return out.append('"').toString();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> asList(Object o) {
        return (List<Object>) o;
    }

    /** Just enough JSON for the input: objects, arrays, strings, integers, null, booleans. */
    private static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            char c = s.charAt(i);
            switch (c) {
                case '{': {
                    Map<String, Object> m = new LinkedHashMap<>();
                    i++;
                    skip();
                    if (s.charAt(i) == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        skip();
                        String key = string();
                        skip();
                        expect(':');
                        m.put(key, value());
                        skip();
                        if (s.charAt(i++) == '}')
                            return m;
                    }
                }
                case '[': {
                    List<Object> l = new ArrayList<>();
                    i++;
                    skip();
                    if (s.charAt(i) == ']') {
                        i++;
                        return l;
                    }
                    while (true) {
                        l.add(value());
                        skip();
                        if (s.charAt(i++) == ']')
                            return l;
                    }
                }
                case '"':
                    return string();
                case 'n':
                    i += 4;
                    return null;
                case 't':
                    i += 4;
                    return Boolean.TRUE;
                case 'f':
                    i += 5;
                    return Boolean.FALSE;
                default: {
                    int start = i;
                    while (i < s.length() && (s.charAt(i) == '-' || Character.isDigit(s.charAt(i))))
                        i++;
                    return Long.parseLong(s.substring(start, i));
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"')
                    return out.toString();
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default: out.append(e);
                }
            }
        }

        private void expect(char c) {
            if (s.charAt(i) != c)
                throw new IllegalArgumentException("expected '" + c + "' at " + i + " of " + s);
            i++;
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i)))
                i++;
        }
    }
}
