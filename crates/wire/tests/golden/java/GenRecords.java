// Writes the golden files under crates/wire/tests/golden/ with the Java client itself, so the
// Rust codec is checked against bytes it did not produce.
//
// Run from the repository root (needs kafka-clients 4.4.0 with snappy-java, lz4-java, zstd-jni):
//   java -cp '/tmp/kpom/libs/*' crates/wire/tests/golden/java/GenRecords.java crates/wire/tests/golden
//
// Every value written here is restated in the comment header of its file and checked, field by
// field, by crates/wire/tests/golden_records.rs and golden_consumer_protocol.rs.

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

@SuppressWarnings("removal") // ConsumerGroupMetadata's constructor: still the way to feed onAssignment
public class GenRecords {
    static final String ORIGIN = "kafka-clients 4.4.0";
    static final long T0 = 1_700_000_000_000L;
    static Path out;

    public static void main(String[] args) throws IOException {
        out = Path.of(args.length > 0 ? args[0] : "crates/wire/tests/golden");
        Files.createDirectories(out);
        records();
        consumerProtocol();
    }

    // ------------------------------------------------------------------------------------------
    // Records

    static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** 40 000 bytes "0123456789" repeated: more than one 32 KiB snappy-java chunk. */
    static byte[] bigValue() {
        byte[] v = new byte[40_000];
        for (int i = 0; i < v.length; i++) v[i] = (byte) ('0' + i % 10);
        return v;
    }

    static final String RECORDS_DOC = String.join("\n",
        "records (offset, timestamp, key, value, headers):",
        "  100, T0,       \"key-0\", \"value-0\", [h1=\"v1\", h2=null]",
        "  101, T0+5,     null,    \"value-1\", []",
        "  102, T0-10,    \"key-2\", null,      [h1=\"\"]",
        "  103, T0+1,     \"key-3\", \"\",        []",
        "T0 = 1700000000000; batch: baseOffset 100, partitionLeaderEpoch 5, CreateTime,",
        "producerId -1, producerEpoch -1, baseSequence -1, not transactional");

    static void appendSample(MemoryRecordsBuilder b) {
        b.appendWithOffset(100, T0, utf8("key-0"), utf8("value-0"),
            new Header[] {new RecordHeader("h1", utf8("v1")), new RecordHeader("h2", null)});
        b.appendWithOffset(101, T0 + 5, null, utf8("value-1"), new Header[0]);
        b.appendWithOffset(102, T0 - 10, utf8("key-2"), null, new Header[] {new RecordHeader("h1", new byte[0])});
        b.appendWithOffset(103, T0 + 1, utf8("key-3"), new byte[0], new Header[0]);
    }

    static MemoryRecordsBuilder builder(ByteBuffer buf, byte magic, Compression c, TimestampType tt, long base,
                                       long logAppendTime, long pid, short epoch, int seq, boolean txn, int ple) {
        return MemoryRecords.builder(buf, magic, c, tt, base, logAppendTime, pid, epoch, seq, txn, ple);
    }

    static byte[] bytesOf(MemoryRecords records) {
        ByteBuffer b = records.buffer();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    static void records() throws IOException {
        List<Object[]> codecs = Arrays.asList(
            new Object[] {"none", Compression.NONE},
            new Object[] {"gzip", Compression.gzip().build()},
            new Object[] {"snappy", Compression.snappy().build()},
            new Object[] {"lz4", Compression.lz4().build()},
            new Object[] {"zstd", Compression.zstd().build()});
        for (Object[] c : codecs) {
            String name = (String) c[0];
            ByteBuffer buf = ByteBuffer.allocate(1 << 20);
            MemoryRecordsBuilder b = builder(buf, RecordBatch.MAGIC_VALUE_V2, (Compression) c[1],
                TimestampType.CREATE_TIME, 100, RecordBatch.NO_TIMESTAMP, -1, (short) -1, -1, false, 5);
            appendSample(b);
            String doc = RECORDS_DOC + "\ncompression: " + name
                + (name.equals("none") ? "" : " (" + c[1].getClass().getSimpleName() + ", default level)");
            if (!name.equals("none")) {
                b.appendWithOffset(104, T0 + 2, utf8("big"), bigValue(), new Header[0]);
                doc += "\n  104, T0+2,     \"big\",   40000 bytes \"0123456789\" repeated, []";
            }
            write("records_" + name + ".hex", "MemoryRecords.builder / MemoryRecordsBuilder.appendWithOffset", doc,
                bytesOf(b.build()));
        }

        // A transactional batch, then its COMMIT marker, then an ABORT marker for another producer.
        ByteBuffer buf = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder b = builder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
            TimestampType.CREATE_TIME, 200, RecordBatch.NO_TIMESTAMP, 4242L, (short) 3, 10, true, 6);
        b.appendWithOffset(200, T0, utf8("tk0"), utf8("tv0"), new Header[0]);
        b.appendWithOffset(201, T0 + 1, utf8("tk1"), utf8("tv1"), new Header[0]);
        ByteArrayBuilder all = new ByteArrayBuilder();
        all.add(bytesOf(b.build()));
        all.add(bytesOf(MemoryRecords.withEndTransactionMarker(202, T0 + 2, 6, 4242L, (short) 3,
            new EndTransactionMarker(ControlRecordType.COMMIT, 11))));
        all.add(bytesOf(MemoryRecords.withEndTransactionMarker(203, T0 + 3, 6, 777L, (short) 0,
            new EndTransactionMarker(ControlRecordType.ABORT, 12))));
        write("records_transactional.hex",
            "MemoryRecords.builder (isTransactional=true) and MemoryRecords.withEndTransactionMarker",
            String.join("\n",
                "three batches, concatenated as in a Fetch response:",
                "1. transactional data batch: baseOffset 200, partitionLeaderEpoch 6, producerId 4242,",
                "   producerEpoch 3, baseSequence 10, CreateTime, no compression, records:",
                "   200, T0, \"tk0\", \"tv0\", []   and   201, T0+1, \"tk1\", \"tv1\", []",
                "2. control batch at offset 202, timestamp T0+2, partitionLeaderEpoch 6, producerId 4242,",
                "   producerEpoch 3: COMMIT marker, coordinatorEpoch 11",
                "3. control batch at offset 203, timestamp T0+3, partitionLeaderEpoch 6, producerId 777,",
                "   producerEpoch 0: ABORT marker, coordinatorEpoch 12",
                "T0 = 1700000000000"),
            all.bytes());

        // Log-append time, as a broker with message.timestamp.type=LogAppendTime writes it.
        buf = ByteBuffer.allocate(4096);
        b = builder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE, TimestampType.LOG_APPEND_TIME, 0,
            T0 + 1000, -1, (short) -1, -1, false, 0);
        b.appendWithOffset(0, T0, utf8("a"), utf8("b"), new Header[0]);
        b.appendWithOffset(1, T0 + 7, null, utf8("c"), new Header[0]);
        write("records_log_append_time.hex", "MemoryRecords.builder (TimestampType.LOG_APPEND_TIME)",
            String.join("\n",
                "baseOffset 0, partitionLeaderEpoch 0, LogAppendTime, logAppendTime T0+1000, no compression,",
                "records: 0, T0, \"a\", \"b\"  and  1, T0+7, null, \"c\"; T0 = 1700000000000"),
            bytesOf(b.build()));

        // A legacy magic-1 message set, which a RecordBatch v2 decoder must refuse by name.
        buf = ByteBuffer.allocate(4096);
        b = builder(buf, RecordBatch.MAGIC_VALUE_V1, Compression.NONE, TimestampType.CREATE_TIME, 50,
            RecordBatch.NO_TIMESTAMP, -1, (short) -1, -1, false, -1);
        b.appendWithOffset(50, T0, utf8("k"), utf8("legacy"), new Header[0]);
        write("records_legacy_magic1.hex", "MemoryRecords.builder (RecordBatch.MAGIC_VALUE_V1)",
            "one magic-1 message at offset 50, timestamp T0 = 1700000000000, key \"k\", value \"legacy\"",
            bytesOf(b.build()));
    }

    static class ByteArrayBuilder {
        final List<byte[]> parts = new ArrayList<>();
        void add(byte[] p) { parts.add(p); }
        byte[] bytes() {
            int n = 0;
            for (byte[] p : parts) n += p.length;
            ByteBuffer b = ByteBuffer.allocate(n);
            for (byte[] p : parts) b.put(p);
            return b.array();
        }
    }

    // ------------------------------------------------------------------------------------------
    // Consumer protocol

    static byte[] array(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return a;
    }

    static void consumerProtocol() throws IOException {
        List<TopicPartition> owned = Arrays.asList(
            new TopicPartition("orders", 2), new TopicPartition("audit", 0), new TopicPartition("orders", 0));
        Subscription full = new Subscription(Arrays.asList("orders", "audit"),
            ByteBuffer.wrap(utf8("ud")), owned, 7, Optional.of("rack-a"));
        String subDoc = String.join("\n",
            "new Subscription(topics [\"orders\", \"audit\"], userData \"ud\",",
            "  ownedPartitions [orders-2, audit-0, orders-0], generationId 7, rackId \"rack-a\")",
            "Java sorts topics and owned partitions and drops the fields a version lacks.");
        for (short v = 0; v <= 3; v++) {
            write("subscription_v" + v + ".hex", "ConsumerProtocol.serializeSubscription(subscription, " + v + ")",
                subDoc + "\nversion " + v, array(ConsumerProtocol.serializeSubscription(full, v)));
        }
        Subscription bare = new Subscription(Arrays.asList("t"), null, new ArrayList<>(), -1, Optional.empty());
        write("subscription_v3_nulls.hex", "ConsumerProtocol.serializeSubscription(subscription, 3)",
            "new Subscription(topics [\"t\"], userData null, ownedPartitions [], generationId -1, rackId empty)",
            array(ConsumerProtocol.serializeSubscription(bare, (short) 3)));

        Assignment asg = new Assignment(Arrays.asList(
            new TopicPartition("orders", 1), new TopicPartition("audit", 0), new TopicPartition("orders", 3)),
            ByteBuffer.wrap(utf8("asg")));
        for (short v = 0; v <= 3; v++) {
            write("assignment_v" + v + ".hex", "ConsumerProtocol.serializeAssignment(assignment, " + v + ")",
                "new Assignment(partitions [orders-1, audit-0, orders-3], userData \"asg\")\n"
                    + "Java groups partitions by topic in order of first appearance.\nversion " + v,
                array(ConsumerProtocol.serializeAssignment(asg, v)));
        }
        write("assignment_v3_nulls.hex", "ConsumerProtocol.serializeAssignment(assignment, 3)",
            "new Assignment(partitions [], userData null)",
            array(ConsumerProtocol.serializeAssignment(new Assignment(new ArrayList<>(), null), (short) 3)));

        StickyAssignor sticky = new StickyAssignor();
        sticky.onAssignment(new Assignment(Arrays.asList(
                new TopicPartition("orders", 0), new TopicPartition("orders", 4), new TopicPartition("audit", 1))),
            new ConsumerGroupMetadata("g", 9, "member-1", Optional.empty()));
        write("sticky_user_data.hex", "StickyAssignor.subscriptionUserData after onAssignment",
            String.join("\n",
                "StickyAssignorUserData v1 (no version prefix): previous assignment",
                "[orders-0, orders-4, audit-1] grouped by topic (HashMap order), generation 9"),
            array(sticky.subscriptionUserData(Set.of("orders", "audit"))));

        CooperativeStickyAssignor coop = new CooperativeStickyAssignor();
        coop.onAssignment(new Assignment(Arrays.asList(new TopicPartition("orders", 0))),
            new ConsumerGroupMetadata("g", 12, "member-1", Optional.empty()));
        write("cooperative_sticky_user_data.hex", "CooperativeStickyAssignor.subscriptionUserData after onAssignment",
            "the generation as one int32: 12", array(coop.subscriptionUserData(Set.of("orders"))));
        write("cooperative_sticky_user_data_initial.hex", "CooperativeStickyAssignor.subscriptionUserData (new)",
            "the generation as one int32: -1 (DEFAULT_GENERATION, before any assignment)",
            array(new CooperativeStickyAssignor().subscriptionUserData(Set.of("orders"))));
    }

    // ------------------------------------------------------------------------------------------

    static void write(String file, String producedBy, String doc, byte[] bytes) throws IOException {
        StringBuilder s = new StringBuilder();
        s.append("# ").append(file).append(": ").append(bytes.length).append(" bytes\n");
        s.append("# produced by ").append(ORIGIN).append(": ").append(producedBy).append('\n');
        s.append("# generator: crates/wire/tests/golden/java/GenRecords.java\n");
        for (String line : doc.split("\n")) s.append("# ").append(line).append('\n');
        for (int i = 0; i < bytes.length; i++) {
            s.append(String.format("%02x", bytes[i] & 0xff));
            if (i % 32 == 31 || i == bytes.length - 1) s.append('\n');
        }
        Files.writeString(out.resolve(file), s.toString());
    }
}
