// The Java side of scripts/bench-rebalance, on the Kafka jars scripts/kafka fetches (compiled by
// the script with javac against `scripts/kafka classpath`; nothing here is built by cargo).
//
//   produce  the bench's load: one record to every partition of the topic each --interval-ms,
//            each stamped with its produce time (the record timestamp, CreateTime), partition
//            chosen explicitly so every partition gets the same steady rate; until SIGTERM.
//   members  the Java client under test: one JVM running N KafkaConsumer threads of one group,
//            the scenario of crates/consumer/src/bin/rebalance-bench (the same steps, the same
//            settle rule, the same trace format, so `rebalance-bench analyze` reads both):
//            start N members, wait until the group settles, a baseline, then --cycles times a
//            member joins (N -> N+1) and, once settled, that member leaves (N+1 -> N).
//
// Trace lines (times in ms since the Unix epoch; partitions of the one topic):
//   steady T | join T M | leave T M | settled T | closed T M | end T
//   assigned T M P,P,... | revoked T M ... | lost T M ...   ("-" for none)
//   r M PARTITION OFFSET CONSUMED_T PRODUCED_T               (one per record polled)

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class RebalanceBench {
    public static void main(String[] argv) throws Exception {
        if (argv.length < 1) {
            die("usage: RebalanceBench produce|members --key value ...");
        }
        Map<String, String> args = new HashMap<>();
        for (int i = 1; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                die("expected --key value, got " + argv[i]);
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        switch (argv[0]) {
            case "produce" -> produce(args);
            case "members" -> new Members(args).run();
            default -> die("unknown command " + argv[0]);
        }
    }

    static void die(String message) {
        System.err.println("RebalanceBench: " + message);
        System.exit(2);
    }

    static String need(Map<String, String> args, String key) {
        String v = args.get(key);
        if (v == null) {
            die("--" + key + " is required");
        }
        return v;
    }

    static long num(Map<String, String> args, String key, long dflt) {
        String v = args.get(key);
        return v == null ? dflt : Long.parseLong(v);
    }

    // ---- produce ----------------------------------------------------------------------------

    static void produce(Map<String, String> args) throws Exception {
        String topic = need(args, "topic");
        int partitions = (int) num(args, "partitions", 1000);
        long interval = num(args, "interval-ms", 100);
        Properties props = new Properties();
        props.put("bootstrap.servers", need(args, "bootstrap"));
        props.put("client.id", "rebalance-bench-producer");
        props.put("acks", "1");
        props.put("enable.idempotence", "false");
        props.put("linger.ms", "5");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        AtomicLong sent = new AtomicLong();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong late = new AtomicLong();
        CountDownLatch firstTick = new CountDownLatch(partitions);
        byte[] value = new byte[16];
        ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
        AtomicLong due = new AtomicLong(System.currentTimeMillis());
        ticks.scheduleAtFixedRate(() -> {
            long now = System.currentTimeMillis();
            // A tick that starts more than an interval after it was due is counted: the rate the
            // consumers see then has a hole that is the producer's, not theirs.
            if (now - due.getAndAdd(interval) > interval) {
                late.incrementAndGet();
            }
            for (int p = 0; p < partitions; p++) {
                producer.send(new ProducerRecord<>(topic, p, now, null, value), (meta, e) -> {
                    if (e == null) {
                        acked.incrementAndGet();
                        firstTick.countDown();
                    } else {
                        failed.incrementAndGet();
                    }
                });
            }
            sent.addAndGet(partitions);
        }, 0, interval, TimeUnit.MILLISECONDS);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            ticks.shutdownNow();
            producer.close(Duration.ofSeconds(5));
            System.err.printf("RebalanceBench produce: stopped; sent %d, acked %d, failed %d, late ticks %d%n",
                sent.get(), acked.get(), failed.get(), late.get());
        }));
        firstTick.await();
        System.out.println("{\"event\":\"ready\"}");
        System.out.flush();
        while (true) {
            Thread.sleep(10_000);
            System.err.printf("RebalanceBench produce: sent %d, acked %d, failed %d, late ticks %d%n",
                sent.get(), acked.get(), failed.get(), late.get());
        }
    }

    // ---- members ----------------------------------------------------------------------------

    /** The members of one group in this JVM, the scenario and the trace. */
    static final class Members {
        final Map<String, String> args;
        final String topic;
        final int partitions;
        final AtomicLongArray lastConsumed;
        final AtomicLongArray lastAssigned;
        final AtomicLong lastEvent = new AtomicLong();
        final List<String> events = new ArrayList<>();
        final List<Member> members = new ArrayList<>();
        final long quietMs;
        final long settleTimeoutMs;

        Members(Map<String, String> args) {
            this.args = args;
            this.topic = need(args, "topic");
            this.partitions = (int) num(args, "partitions", 1000);
            this.lastConsumed = new AtomicLongArray(partitions);
            this.lastAssigned = new AtomicLongArray(partitions);
            this.quietMs = num(args, "quiet-ms", 1000);
            this.settleTimeoutMs = num(args, "settle-timeout-ms", 90_000);
        }

        synchronized void event(String line) {
            events.add(line);
        }

        void listenerEvent(String kind, int member, Collection<TopicPartition> parts) {
            long now = System.currentTimeMillis();
            lastEvent.set(now);
            String list = parts.isEmpty() ? "-"
                : parts.stream().map(tp -> Integer.toString(tp.partition())).collect(Collectors.joining(","));
            event(kind + " " + now + " " + member + " " + list);
        }

        Properties props(int id) {
            Properties props = new Properties();
            props.put("bootstrap.servers", need(args, "bootstrap"));
            props.put("group.id", need(args, "group"));
            props.put("client.id", "rebalance-bench-java-" + id);
            props.put("auto.offset.reset", "latest");
            props.put("key.deserializer", ByteArrayDeserializer.class.getName());
            props.put("value.deserializer", ByteArrayDeserializer.class.getName());
            String protocol = args.getOrDefault("protocol", "classic");
            props.put("group.protocol", protocol);
            if (protocol.equals("classic")) {
                props.put("partition.assignment.strategy",
                    switch (args.getOrDefault("strategy", "cooperative-sticky")) {
                        case "range" -> "org.apache.kafka.clients.consumer.RangeAssignor";
                        case "cooperative-sticky" -> "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
                        default -> throw new IllegalArgumentException("--strategy range|cooperative-sticky");
                    });
            }
            return props;
        }

        Member start() {
            Member m = new Member(this, members.size());
            members.add(m);
            m.thread.start();
            return m;
        }

        List<Member> live() {
            return members.stream().filter(m -> !m.closed).toList();
        }

        /**
         * Settled: every partition held by exactly one live member, the partitions spread evenly
         * (each member floor or ceil of partitions/members: what range, cooperative-sticky and the
         * broker's uniform assignor give one topic), every partition consumed since it was last
         * assigned and since t0, and no listener call for quiet-ms.
         */
        boolean settled(long t0) {
            long now = System.currentTimeMillis();
            if (now - lastEvent.get() < quietMs) {
                return false;
            }
            List<Member> live = live();
            if (live.isEmpty()) {
                return false;
            }
            int[] owners = new int[partitions];
            int low = partitions / live.size();
            int high = (partitions + live.size() - 1) / live.size();
            for (Member m : live) {
                Set<Integer> held = m.assigned;
                int n = 0;
                for (int p : held) {
                    owners[p]++;
                    n++;
                }
                if (n < low || n > high) {
                    return false;
                }
            }
            for (int p = 0; p < partitions; p++) {
                long since = Math.max(t0, lastAssigned.get(p));
                if (owners[p] != 1 || lastConsumed.get(p) <= since) {
                    return false;
                }
            }
            return true;
        }

        void waitSettled(long t0, String what) throws InterruptedException {
            long deadline = t0 + settleTimeoutMs;
            while (!settled(t0)) {
                for (Member m : members) {
                    if (m.closed && !m.stopping) {
                        throw new IllegalStateException(what + ": member " + m.id + " stopped on its own");
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(what + ": the group did not settle within "
                        + settleTimeoutMs + " ms");
                }
                Thread.sleep(50);
            }
            long now = System.currentTimeMillis();
            System.err.printf("RebalanceBench members: %s settled after %d ms%n", what, now - t0);
            event("settled " + now);
        }

        void run() throws Exception {
            int n = (int) num(args, "members", 3);
            int cycles = (int) num(args, "cycles", 1);
            long baselineMs = num(args, "baseline-ms", 3000);
            long holdMs = num(args, "hold-ms", 2000);
            Path trace = Path.of(need(args, "trace"));
            String failure = null;
            long begun = System.currentTimeMillis();
            for (int i = 0; i < n; i++) {
                start();
            }
            try {
                waitSettled(begun, "the first " + n + " members");
                event("steady " + System.currentTimeMillis());
                Thread.sleep(baselineMs);
                for (int c = 0; c < cycles; c++) {
                    long t0 = System.currentTimeMillis();
                    event("join " + t0 + " " + members.size());
                    Member joined = start();
                    waitSettled(t0, "join " + (c + 1));
                    Thread.sleep(holdMs);
                    t0 = System.currentTimeMillis();
                    event("leave " + t0 + " " + joined.id);
                    joined.leave();
                    waitSettled(t0, "leave " + (c + 1));
                    Thread.sleep(holdMs);
                }
            } catch (IllegalStateException e) {
                failure = e.getMessage();
            }
            event("end " + System.currentTimeMillis());
            for (Member m : members) {
                m.leave();
            }
            for (Member m : members) {
                m.thread.join();
            }
            write(trace);
            if (failure != null) {
                die(failure);
            }
        }

        void write(Path path) throws IOException {
            try (BufferedWriter w = Files.newBufferedWriter(path)) {
                for (String line : events) {
                    w.write(line);
                    w.newLine();
                }
                for (Member m : members) {
                    long[] r = m.records;
                    for (int i = 0; i + 3 < m.used; i += 4) {
                        w.write("r " + m.id + " " + r[i] + " " + r[i + 1] + " " + r[i + 2] + " " + r[i + 3]);
                        w.newLine();
                    }
                }
            }
        }
    }

    /** One KafkaConsumer on a thread of its own: poll, note each record, until asked to leave. */
    static final class Member implements ConsumerRebalanceListener {
        final Members bench;
        final int id;
        final Thread thread;
        final Set<Integer> assigned = ConcurrentHashMap.newKeySet();
        volatile boolean stopping;
        volatile boolean closed;
        volatile KafkaConsumer<byte[], byte[]> consumer;
        // partition, offset, consumed at, produced at: four longs a record, written by the
        // member's thread only and read after it ended.
        long[] records = new long[4 * 8192];
        int used;

        Member(Members bench, int id) {
            this.bench = bench;
            this.id = id;
            this.thread = new Thread(this::loop, "member-" + id);
        }

        void leave() {
            stopping = true;
            KafkaConsumer<byte[], byte[]> c = consumer;
            if (c != null) {
                c.wakeup();
            }
        }

        void loop() {
            KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(bench.props(id));
            consumer = c;
            try {
                c.subscribe(List.of(bench.topic), this);
                while (!stopping) {
                    ConsumerRecords<byte[], byte[]> polled = c.poll(Duration.ofMillis(100));
                    long now = System.currentTimeMillis();
                    for (ConsumerRecord<byte[], byte[]> r : polled) {
                        note(r.partition(), r.offset(), now, r.timestamp());
                        bench.lastConsumed.set(r.partition(), now);
                    }
                }
            } catch (WakeupException e) {
                // leave(): fall through to close.
            } finally {
                try {
                    c.close();
                } catch (WakeupException e) {
                    c.close();
                }
                closed = true;
                bench.event("closed " + System.currentTimeMillis() + " " + id);
            }
        }

        void note(long partition, long offset, long consumed, long produced) {
            if (used + 4 > records.length) {
                records = Arrays.copyOf(records, records.length * 2);
            }
            records[used++] = partition;
            records[used++] = offset;
            records[used++] = consumed;
            records[used++] = produced;
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> parts) {
            long now = System.currentTimeMillis();
            for (TopicPartition tp : parts) {
                assigned.add(tp.partition());
                bench.lastAssigned.set(tp.partition(), now);
            }
            bench.listenerEvent("assigned", id, parts);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> parts) {
            for (TopicPartition tp : parts) {
                assigned.remove(tp.partition());
            }
            bench.listenerEvent("revoked", id, parts);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> parts) {
            for (TopicPartition tp : parts) {
                assigned.remove(tp.partition());
            }
            bench.listenerEvent("lost", id, parts);
        }
    }
}
